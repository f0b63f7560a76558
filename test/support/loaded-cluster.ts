// Where each fault test starts: a fault cluster with the mixed load running over every gateway,
// once every route it runs has answered a call.
import {
  gatewayLinesNaming,
  startFaultCluster,
  type FaultCluster,
  type FaultClusterOptions,
} from './fault-cluster.js';
import { startMixedLoad, type CallRecord, type MixedLoad, type MixedLoadOptions } from './mixed-load.js';

export interface LoadedCluster {
  cluster: FaultCluster;
  load: MixedLoad;
  /**
   * Failed calls for an assertion message: one line each, then what the gateways logged for
   * them (found by request id), which says why a call the client only saw as a code failed.
   */
  explain: (records: readonly CallRecord[]) => string;
  /** Stops the load, then the cluster. */
  stop(): Promise<void>;
}

/**
 * Starts the cluster, runs `prepare` on it (what must exist before the first call, e.g. a webhook
 * endpoint), then the load over every gateway (the browser route on the cluster's test site).
 */
export async function startLoadedCluster(
  clusterOptions: FaultClusterOptions = {},
  loadOptions: Pick<MixedLoadOptions, 'routes'> = {},
  prepare?: (cluster: FaultCluster) => Promise<void>,
): Promise<LoadedCluster> {
  const cluster = await startFaultCluster(clusterOptions);
  let load: MixedLoad | undefined;
  try {
    await prepare?.(cluster);
    load = await startMixedLoad({
      gateways: cluster.gateways.map((g) => g.url),
      key: cluster.key.key,
      siteOrigin: cluster.site.origin,
      ...loadOptions,
    });
    // Every route works before anything is broken.
    await load.untilSucceeded(1, 180_000);
  } catch (error) {
    await load?.stop();
    await cluster.stop();
    throw error;
  }
  const started = load;
  return {
    cluster,
    load: started,
    explain: (records) => {
      const logged = gatewayLinesNaming(
        cluster,
        records.map((r) => r.detail ?? ''),
      );
      const said = started.describe(records);
      return logged.length === 0 ? said : `${said}\ngateway log:\n${logged.join('\n')}`;
    },
    async stop() {
      await started.stop();
      await cluster.stop();
    },
  };
}
