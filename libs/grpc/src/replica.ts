import type { Client, ClientReadableStream } from '@grpc/grpc-js';
import { credentials } from '@grpc/grpc-js';
import { Health, type HealthClient, type HealthCheckResponse__Output } from '@switchboard/contracts';

/**
 * What the gateway knows of one replica: its grpc.health.v1 answer, UNREACHABLE while the health
 * watch cannot reach it, UNKNOWN until the first answer comes.
 */
export type ReplicaStatus = 'SERVING' | 'NOT_SERVING' | 'UNREACHABLE' | 'UNKNOWN';

export interface ReplicaInfo {
  address: string;
  status: ReplicaStatus;
  /** Calls this process has open to it now (streams until they end). */
  in_flight: number;
  /** Calls this process has sent to it since it was first resolved, retries included. */
  served: number;
}

/** How long a health watch that got no answer waits before it tries again. */
const WATCH_RETRY_MS = 1_000;
/** A watch that answered and then ended (drain, connection age) is reopened after this. */
const WATCH_REOPEN_MS = 50;

/**
 * One resolved address of a worker: its own grpc-js client (one channel, one connection), a
 * grpc.health.v1 Watch on that same channel so a drain (NOT_SERVING) or a dead process is seen
 * at once, and the calls this process has open to it.
 */
export class Replica<C extends Client> {
  status: ReplicaStatus = 'UNKNOWN';
  inFlight = 0;
  served = 0;
  /** No longer resolved: takes no new calls, closes once the last open one ends. */
  retired = false;
  /** grpc.health.v1 on the replica's own channel. */
  readonly health: HealthClient;
  private watch: ClientReadableStream<HealthCheckResponse__Output> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    readonly address: string,
    readonly client: C,
  ) {
    // The watch rides the replica client's own channel (TLS included, when the pool's transport
    // has it): with channelOverride grpc-js ignores the credentials given here.
    this.health = new Health(address, credentials.createInsecure(), { channelOverride: client.getChannel() });
    this.watchHealth();
  }

  info(): ReplicaInfo {
    return { address: this.address, status: this.status, in_flight: this.inFlight, served: this.served };
  }

  /** Counts a call as open; the returned function closes it (once, whatever calls it). */
  begin(): () => void {
    this.inFlight += 1;
    this.served += 1;
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      this.inFlight -= 1;
      if (this.retired && this.inFlight === 0) this.close();
    };
  }

  /** Leaves the pool: closes now when idle, else when its last call ends. */
  retire(): void {
    this.retired = true;
    if (this.inFlight === 0) this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.watch?.cancel();
    this.client.close();
  }

  private watchHealth(): void {
    if (this.closed) return;
    let answered = false;
    const call = this.health.Watch({ service: '' });
    this.watch = call;
    call.on('data', (response: HealthCheckResponse__Output) => {
      answered = true;
      this.status = response.status === 'SERVING' ? 'SERVING' : 'NOT_SERVING';
    });
    // Every end of the watch comes through 'status' too; errors need a listener only.
    call.on('error', () => undefined);
    call.on('status', () => {
      if (this.closed) return;
      // A watch that never answered means nobody is there. One that answered and then ended is
      // reopened at once, keeping what it said: its connection may only have aged out (GOAWAY
      // after grpc.max_connection_age_ms). If the replica is gone, the reopened one fails at once.
      if (!answered) this.status = 'UNREACHABLE';
      this.timer = setTimeout(() => this.watchHealth(), answered ? WATCH_REOPEN_MS : WATCH_RETRY_MS);
    });
  }
}
