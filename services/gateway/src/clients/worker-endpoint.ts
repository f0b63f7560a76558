import type { Client } from '@grpc/grpc-js';
import {
  checkingServerName,
  type ClientConstructor,
  type ClientTransport,
  type CreateClientOptions,
  parseTarget,
  ReplicaPool,
} from '@switchboard/grpc';
import type { Logger } from '@switchboard/telemetry';
import type { GatewayMetrics } from '../ops/metrics.js';

/** Where a worker listens and how long its calls may take (from the gateway's config). */
export interface WorkerEndpoint {
  address: string;
  deadlineMs: number;
  /** CLUSTER_SECRET, sent on every call: workers refuse calls without it. */
  clusterSecret: string;
  /** TLS (GRPC_TLS_*), one transport shared by every client of the process; unset = plaintext. */
  transport?: ClientTransport | undefined;
}

/** What every call to any worker carries: the cluster secret, and TLS when configured. */
export type WorkerAccess = Pick<WorkerEndpoint, 'clusterSecret' | 'transport'>;

/** How a worker's name becomes replicas (WORKER_DNS_SERVER, WORKER_RESOLVE_INTERVAL_MS). */
export interface WorkerRouting {
  dnsServer?: string | undefined;
  resolveIntervalMs: number;
  /** Per-replica call counts go here when given. */
  metrics?: Pick<GatewayMetrics, 'workerCalls' | 'watchReplicas'>;
}

export const defaultRouting: WorkerRouting = { resolveIntervalMs: 5_000 };

/** The gRPC client options every client of a worker uses: its deadline, the secret, TLS, the log. */
export function endpointClientOptions(endpoint: WorkerEndpoint, logger: Logger): CreateClientOptions {
  return {
    deadlineMs: endpoint.deadlineMs,
    logger,
    clusterSecret: endpoint.clusterSecret,
    // A browser session's calls dial its worker's pod IP: its certificate names the Service.
    transport:
      endpoint.transport && checkingServerName(endpoint.transport, parseTarget(endpoint.address).host),
  };
}

/**
 * The clients of every replica behind a worker's address (one per address its name resolves to),
 * with the worker's per-replica metrics: calls sent, and calls open read at each scrape.
 */
export function workerPool<C extends Client>(
  worker: string,
  Ctor: ClientConstructor<C>,
  endpoint: WorkerEndpoint,
  logger: Logger,
  routing: WorkerRouting,
): ReplicaPool<C> {
  const { metrics } = routing;
  const pool = new ReplicaPool(Ctor, endpoint.address, {
    ...endpointClientOptions(endpoint, logger),
    dnsServer: routing.dnsServer,
    resolveIntervalMs: routing.resolveIntervalMs,
    listener: {
      onCall: (address) => metrics?.workerCalls.inc({ worker, address }),
      onRemoved: (address) => metrics?.workerCalls.remove({ worker, address }),
    },
  });
  metrics?.watchReplicas(worker, () => pool.replicas());
  return pool;
}
