import type { RequestHandler } from 'express';
import type { Logger } from '@switchboard/telemetry';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface GatewayMetrics {
  requests: Counter<'method' | 'route' | 'status'>;
  latency: Histogram<'method' | 'route' | 'status'>;
  rateLimitRejections: Counter<'reason'>;
  rateLimitDegraded: Gauge;
  /** Calls sent to each worker replica (retries included), by worker and replica address. */
  workerCalls: Counter<'worker' | 'address'>;
  /** Calls open to each replica now; read at each scrape from the clients given to watchReplicas. */
  workerCallsInFlight: Gauge<'worker' | 'address'>;
  watchReplicas(worker: string, replicas: () => readonly ReplicaLoad[]): void;
  /** Usage this replica stored (a record another replica stored first is not counted again). */
  usageRecorded: Counter<'capability' | 'meter'>;
  /** Calls refused with 429 quota_exceeded, by the meter whose quota refused them. */
  quotaRefusals: Counter<'meter'>;
  /** Usage records whose write failed: queued to be written again, or dropped (queue full). */
  usageRecordFailures: Counter<'outcome'>;
}

/** What the in-flight gauge reads of a replica (ReplicaInfo from @switchboard/grpc fits). */
export interface ReplicaLoad {
  address: string;
  in_flight: number;
}

export function createGatewayMetrics(registry: Registry): GatewayMetrics {
  const replicaSources = new Map<string, () => readonly ReplicaLoad[]>();
  return {
    requests: new Counter({
      name: 'switchboard_http_requests_total',
      help: 'HTTP requests by route template and status.',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'switchboard_http_request_duration_seconds',
      help: 'HTTP request latency by route template and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    rateLimitRejections: new Counter({
      name: 'switchboard_rate_limit_rejections_total',
      help: 'Requests refused with 429, by reason (key quota or failed authentication per IP).',
      labelNames: ['reason'],
      registers: [registry],
    }),
    rateLimitDegraded: new Gauge({
      name: 'switchboard_rate_limit_store_degraded',
      help: '1 while Redis is unreachable and limits are counted per process instead of cluster-wide.',
      registers: [registry],
    }),
    workerCalls: new Counter({
      name: 'switchboard_worker_calls_total',
      help: 'gRPC calls this gateway sent to each worker replica, retries included.',
      labelNames: ['worker', 'address'],
      registers: [registry],
    }),
    workerCallsInFlight: new Gauge({
      name: 'switchboard_worker_calls_in_flight',
      help: 'gRPC calls this gateway has open to each worker replica now (streams until they end).',
      labelNames: ['worker', 'address'],
      registers: [registry],
      // Read fresh at each scrape, so a replica that left the worker's name leaves the gauge too.
      collect() {
        this.reset();
        for (const [worker, replicas] of replicaSources) {
          for (const { address, in_flight } of replicas()) this.set({ worker, address }, in_flight);
        }
      },
    }),
    usageRecorded: new Counter({
      name: 'switchboard_usage_total',
      help: 'Usage recorded, by capability and meter (each record counted once cluster-wide).',
      labelNames: ['capability', 'meter'],
      registers: [registry],
    }),
    quotaRefusals: new Counter({
      name: 'switchboard_quota_refusals_total',
      help: 'Calls refused with 429 quota_exceeded, by meter.',
      labelNames: ['meter'],
      registers: [registry],
    }),
    usageRecordFailures: new Counter({
      name: 'switchboard_usage_record_failures_total',
      help: 'Usage records whose write to the usage store failed: retried in the background or dropped.',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    watchReplicas(worker, replicas) {
      replicaSources.set(worker, replicas);
    },
  };
}

/**
 * Counts every response by its route *template* (never the raw path, which would explode the
 * label set with ids), with unmatched paths folded into one label.
 */
export function observeRequests(metrics: GatewayMetrics, logger: Logger): RequestHandler {
  const accessLog = logger.isLevelEnabled('info');
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const routePath = (req.route as { path?: string } | undefined)?.path;
      const route = routePath ? `${req.baseUrl}${routePath}` : 'unmatched';
      const labels = { method: req.method, route, status: String(res.statusCode) };
      metrics.requests.inc(labels);
      metrics.latency.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
      if (accessLog) {
        res.locals.ctx.logger.info(
          {
            method: req.method,
            route,
            status: res.statusCode,
            ms: Number(process.hrtime.bigint() - started) / 1e6,
          },
          'request',
        );
      }
    });
    next();
  };
}
