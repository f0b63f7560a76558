import type { UsageStore } from '@switchboard/usage';
import { Metering, type MeteringDeps } from './metering.js';

const byStore = new WeakMap<UsageStore, Metering>();

/**
 * The one Metering of a usage store: the routes and the background recorders (jobs, browser
 * sessions) of a gateway share it, and with it its queue of records to write again.
 */
export function meteringOf(deps: MeteringDeps): Metering {
  let metering = byStore.get(deps.usage);
  if (!metering) {
    metering = new Metering(deps);
    byStore.set(deps.usage, metering);
  }
  return metering;
}
