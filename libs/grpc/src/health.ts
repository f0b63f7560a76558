import { status as GrpcStatus, type ServerWritableStream } from '@grpc/grpc-js';
import type {
  HealthCheckRequest__Output,
  HealthCheckResponse,
  HealthCheckResponse__Output,
  HealthHandlers,
} from '@switchboard/contracts';

export type ServingStatus = HealthCheckResponse__Output['status'];
/** What a worker may report; UNKNOWN and SERVICE_UNKNOWN are the protocol's, not a worker's. */
export type ReportedStatus = 'SERVING' | 'NOT_SERVING';

/** The overall status: what Kubernetes' gRPC probe and grpc_health_probe ask for by default. */
export const OVERALL = '';

type Watcher = (status: ServingStatus) => void;

/**
 * grpc.health.v1 state for one server: a status per service name plus the overall one (""). A
 * worker starts NOT_SERVING and flips to SERVING only once its models are loaded. After close()
 * (shutdown) every status is NOT_SERVING and stays so, whatever a late model-loaded callback sets.
 */
export class HealthReporter {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly watchers = new Map<string, Set<Watcher>>();
  private readonly watchCalls = new Set<
    ServerWritableStream<HealthCheckRequest__Output, HealthCheckResponse>
  >();
  private closed = false;

  constructor(services: readonly string[], initial: ReportedStatus = 'NOT_SERVING') {
    for (const service of [OVERALL, ...services]) this.statuses.set(service, initial);
  }

  /** Sets one service's status (OVERALL for the server as a whole); registers it if new. */
  set(service: string, status: ReportedStatus): void {
    if (this.closed) return;
    this.update(service, status);
  }

  /** Sets every registered service and the overall status at once. */
  setAll(status: ReportedStatus): void {
    for (const service of this.statuses.keys()) this.set(service, status);
  }

  get(service: string = OVERALL): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  /** Whether the server as a whole takes work now (the `switchboard_serving` gauge reads it). */
  isServing(): boolean {
    return this.statuses.get(OVERALL) === 'SERVING';
  }

  /** For shutdown: everything NOT_SERVING for good, and open Watch streams ended so drains finish. */
  close(): void {
    if (this.closed) return;
    for (const service of this.statuses.keys()) this.update(service, 'NOT_SERVING');
    this.closed = true;
    for (const call of this.watchCalls) call.end();
    this.watchCalls.clear();
  }

  readonly handlers: HealthHandlers = {
    Check: (call, callback) => {
      const status = this.statuses.get(call.request.service);
      if (status === undefined) {
        callback({
          code: GrpcStatus.NOT_FOUND,
          details: `unknown service ${JSON.stringify(call.request.service)}`,
        });
        return;
      }
      callback(null, { status });
    },
    // Sends the current status at once, then each change; an unknown service is SERVICE_UNKNOWN
    // (not an error), as the protocol says, since it may be registered later.
    Watch: (call) => {
      const service = call.request.service;
      if (this.closed) {
        call.write({ status: 'NOT_SERVING' });
        call.end();
        return;
      }
      let last: ServingStatus | undefined;
      const send: Watcher = (status) => {
        if (status === last) return;
        last = status;
        call.write({ status });
      };
      send(this.statuses.get(service) ?? 'SERVICE_UNKNOWN');
      const set = this.watchers.get(service) ?? new Set<Watcher>();
      this.watchers.set(service, set);
      set.add(send);
      this.watchCalls.add(call);
      const stop = () => {
        set.delete(send);
        this.watchCalls.delete(call);
      };
      call.once('cancelled', stop);
      call.once('finish', stop);
    },
  };

  private update(service: string, status: ServingStatus): void {
    const before = this.statuses.get(service);
    this.statuses.set(service, status);
    if (before === status) return;
    for (const watcher of this.watchers.get(service) ?? []) watcher(status);
  }
}

/** The fully-qualified service name of a definition, from its methods' paths ("/pkg.Svc/Method"). */
export function serviceNameOf(definition: Record<string, { path: string }>): string {
  const first = Object.values(definition)[0];
  const name = first?.path.split('/')[1];
  if (name === undefined || name === '') throw new Error('service definition has no methods');
  return name;
}
