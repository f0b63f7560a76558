import { Gauge, type Registry } from 'prom-client';

/** What tells this replica its copy of the API keys is current. */
export interface KeyViewSources {
  /** The key watch has loaded the bucket and is still running (KeyStore.isReady). */
  watching(): boolean;
  /** Milliseconds since NATS, which delivers the watch, last answered (NatsLiveness). */
  natsSilentForMs(): number;
}

/**
 * `switchboard_key_store_age_seconds`: seconds since this gateway last confirmed its view of the
 * API keys is current. The view is current as of the last time NATS answered while the watch was
 * running: a revocation written before then has reached it. While NATS is silent or the watch is
 * gone the age grows, and with it the window in which a revoked key may still be honoured here.
 */
export function registerKeyStoreAge(registry: Registry, sources: KeyViewSources, now = Date.now): Gauge {
  let confirmedAt = now();
  return new Gauge({
    name: 'switchboard_key_store_age_seconds',
    help: 'Seconds since this gateway last confirmed its view of the API keys is current (key watch running, NATS answering).',
    registers: [registry],
    collect() {
      const at = now();
      if (sources.watching()) confirmedAt = Math.max(confirmedAt, at - sources.natsSilentForMs());
      this.set(Math.max(0, (at - confirmedAt) / 1000));
    },
  });
}
