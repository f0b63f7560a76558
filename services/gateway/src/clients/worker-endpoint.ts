import type { CreateClientOptions } from '@switchboard/grpc';
import type { Logger } from '@switchboard/telemetry';

/** Where a worker listens and how long its calls may take (from the gateway's config). */
export interface WorkerEndpoint {
  address: string;
  deadlineMs: number;
  /** CLUSTER_SECRET, sent on every call: workers refuse calls without it. */
  clusterSecret: string;
}

/** The gRPC client options every client of a worker uses: its deadline, the secret, the log. */
export function endpointClientOptions(endpoint: WorkerEndpoint, logger: Logger): CreateClientOptions {
  return { deadlineMs: endpoint.deadlineMs, logger, clusterSecret: endpoint.clusterSecret };
}
