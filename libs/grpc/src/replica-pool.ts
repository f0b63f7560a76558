import { setTimeout as sleep } from 'node:timers/promises';
import { isIP } from 'node:net';
import {
  type CallOptions,
  type Client,
  type ClientReadableStream,
  Metadata,
  type ServiceError,
  status as GrpcStatus,
} from '@grpc/grpc-js';
import { errorMetadataKeys, fromGrpcError } from '@switchboard/errors';
import {
  type ClientConstructor,
  type CreateClientOptions,
  createClient,
  type UnaryMethod,
  type UnaryOptions,
} from './client.js';
import { checkHealth, type HealthStatus } from './health-check.js';
import { Replica, type ReplicaInfo, type ReplicaStatus } from './replica.js';
import { checkingServerName, plaintextTransport } from './tls.js';
import {
  hostResolver,
  joinHostPort,
  parseTarget,
  type ResolveHost,
  type WorkerTarget,
} from './replica-resolver.js';

export interface ReplicaPoolOptions extends CreateClientOptions {
  /** How often the name is resolved again (default 5 s): replicas come and go while it runs. */
  resolveIntervalMs?: number;
  /** `ip[:port]` of the DNS server to ask instead of the system's resolver. */
  dnsServer?: string;
  /** Replaces the resolution altogether (tests). */
  resolve?: ResolveHost;
  /** Told of every call sent to a replica (retries included), and of replicas that went away. */
  listener?: ReplicaListener;
}

export interface ReplicaListener {
  onCall?(address: string): void;
  onRemoved?(address: string): void;
}

/** Routing preference: a replica known to serve, then one not heard from yet, then the rest. */
const rank: Record<ReplicaStatus, number> = { SERVING: 0, UNKNOWN: 1, NOT_SERVING: 2, UNREACHABLE: 3 };

/**
 * The clients of one worker name: every address it resolves to gets a client of its own, the name
 * is resolved again every `resolveIntervalMs`, and each call goes to the replica with the fewest
 * calls open from this process (ties in turn), preferring SERVING ones. A call that failed with
 * UNAVAILABLE before any handler took it (refused, GOAWAY of a draining replica, a dead process),
 * is sent again (maxAttempts in all, default 3), to a replica not tried yet where there is one,
 * within the same deadline; a handler's refusal for now goes on only to a replica not tried yet.
 */
export class ReplicaPool<C extends Client> {
  private readonly members = new Map<string, Replica<C>>();
  private readonly target: WorkerTarget;
  private readonly resolveHost: ResolveHost;
  private readonly timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private turn = 0;
  private closed = false;

  constructor(
    private readonly Ctor: ClientConstructor<C>,
    readonly name: string,
    private readonly options: ReplicaPoolOptions,
  ) {
    this.target = parseTarget(name);
    this.resolveHost = options.resolve ?? hostResolver(options.dnsServer);
    if (isIP(this.target.host) !== 0 && options.resolve === undefined) {
      // An IP address stands for itself: nothing to resolve, now or later.
      this.add(joinHostPort(this.target.host, this.target.port));
      return;
    }
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), options.resolveIntervalMs ?? 5_000);
    this.timer.unref();
  }

  /** Every replica known now, with what this process sees of it. */
  replicas(): ReplicaInfo[] {
    return [...this.members.values()].map((replica) => replica.info());
  }

  /** One Check per replica now; the best answer (any SERVING replica makes the worker SERVING). */
  async checkHealth(timeoutMs = 1_000): Promise<HealthStatus> {
    if (this.members.size === 0) await this.refresh();
    const answers = await Promise.all(
      [...this.members.values()].map((replica) => checkHealth(replica.health, '', timeoutMs)),
    );
    const order: HealthStatus[] = ['SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN', 'UNKNOWN', 'UNREACHABLE'];
    return order.find((status) => answers.includes(status)) ?? 'UNREACHABLE';
  }

  /** Resolves the name now (a resolution already under way is shared). */
  refresh(): Promise<void> {
    this.refreshing ??= this.resolveOnce().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** A unary call as a promise, retried as the class says; failures are SwitchboardErrors. */
  async unary<Req, Res>(
    method: (client: C) => UnaryMethod<Req, Res>,
    request: Req,
    metadata: Metadata = new Metadata(),
    options: UnaryOptions = {},
  ): Promise<Res> {
    const { signal, ...callOptions } = options;
    const deadline = deadlineOf(callOptions.deadline, this.options.deadlineMs);
    const tried = new Set<string>();
    for (let attempt = 1; ; attempt += 1) {
      if (signal?.aborted) throw cancelled();
      const replica = await this.choose(tried);
      const done = this.begin(replica);
      const outcome = await new Promise<{ response?: Res; error?: ServiceError; started: boolean }>(
        (resolve) => {
          let started = false;
          const call = method(replica.client)(
            request,
            metadata.clone(),
            { ...callOptions, deadline },
            (error, response) => {
              signal?.removeEventListener('abort', cancel);
              done();
              resolve({ response, error: error ?? undefined, started });
            },
          );
          call.on('metadata', () => (started = true));
          const cancel = () => call.cancel();
          signal?.addEventListener('abort', cancel, { once: true });
        },
      );
      if (outcome.error === undefined) {
        if (outcome.response === undefined)
          throw fromGrpcError({ code: GrpcStatus.INTERNAL, details: 'empty response' });
        return outcome.response;
      }
      if (!(await this.again(outcome.error, outcome.started, attempt, tried, deadline, signal))) {
        throw fromGrpcError(outcome.error);
      }
    }
  }

  /**
   * A server-streaming call as an async iterable, open (and counted in flight) until it ends. It
   * is sent again only while no message has come. Leaving the loop early or aborting `signal`
   * cancels the call, so the worker stops.
   */
  async *stream<Res>(
    open: (client: C, options: CallOptions) => ClientReadableStream<Res>,
    signal?: AbortSignal,
  ): AsyncGenerator<Res> {
    const deadline = Date.now() + this.options.deadlineMs;
    const tried = new Set<string>();
    for (let attempt = 1; ; attempt += 1) {
      if (signal?.aborted) throw cancelled();
      const replica = await this.choose(tried);
      const done = this.begin(replica);
      const call = open(replica.client, { deadline });
      let started = false;
      let received = false;
      let finished = false;
      call.on('metadata', () => (started = true));
      const cancel = () => call.cancel();
      signal?.addEventListener('abort', cancel, { once: true });
      try {
        for await (const message of call) {
          received = true;
          yield message as Res;
        }
        finished = true;
        return;
      } catch (error) {
        finished = true;
        const failure = error as ServiceError;
        if (received || !(await this.again(failure, started, attempt, tried, deadline, signal))) {
          throw fromGrpcError(failure);
        }
      } finally {
        signal?.removeEventListener('abort', cancel);
        done();
        if (!finished) call.cancel();
      }
    }
  }

  /**
   * A replica for a call the caller makes itself (a client stream, which cannot be sent again):
   * `done` must be called when the call ends. Throws `unavailable` when no address is known.
   */
  lease(): { client: C; address: string; done: () => void } {
    const replica = this.pick(new Set());
    if (replica === undefined) {
      // Uploads come rarely before the first resolution has answered; the next one finds it.
      void this.refresh();
      throw noReplica(this.name);
    }
    return { client: replica.client, address: replica.address, done: this.begin(replica) };
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    for (const replica of this.members.values()) replica.close();
    this.members.clear();
  }

  private async resolveOnce(): Promise<void> {
    let hosts: string[];
    try {
      hosts = await this.resolveHost(this.target.host);
    } catch (error) {
      this.options.logger?.warn(
        { target: this.name, err_code: (error as NodeJS.ErrnoException).code },
        'worker name not resolved; keeping the replicas known',
      );
      return;
    }
    // No address at all is more likely a resolver's hiccup than a worker scaled to nothing; the
    // replicas known still fail or answer for themselves.
    if (this.closed || hosts.length === 0) return;
    const addresses = new Set(hosts.map((host) => joinHostPort(host, this.target.port)));
    for (const address of addresses) if (!this.members.has(address)) this.add(address);
    for (const [address, replica] of this.members) {
      if (addresses.has(address)) continue;
      this.members.delete(address);
      replica.retire();
      this.options.logger?.info({ target: this.name, address }, 'worker replica removed');
      this.options.listener?.onRemoved?.(address);
    }
  }

  private add(address: string): void {
    // Retries happen here, across replicas; the channel's own would only try the same one again,
    // and stacked on these they would stretch how long a call to a dead worker takes to fail.
    const client = createClient(this.Ctor, address, {
      ...this.options,
      transport: checkingServerName(this.options.transport ?? plaintextTransport, this.target.host),
      maxAttempts: 1,
    });
    this.members.set(address, new Replica(address, client));
    if (isIP(this.target.host) === 0)
      this.options.logger?.info({ target: this.name, address }, 'worker replica added');
  }

  private begin(replica: Replica<C>): () => void {
    this.options.listener?.onCall?.(replica.address);
    return replica.begin();
  }

  private async choose(tried: Set<string>): Promise<Replica<C>> {
    if (this.members.size === 0) await this.refresh();
    const replica = this.pick(tried);
    if (replica === undefined) throw noReplica(this.name);
    tried.add(replica.address);
    return replica;
  }

  /** The best replica: best status, then fewest calls open, then in turn; untried ones first. */
  private pick(tried: ReadonlySet<string>): Replica<C> | undefined {
    const all = [...this.members.values()];
    const untried = all.filter((replica) => !tried.has(replica.address));
    let best: Replica<C>[] = [];
    for (const replica of untried.length > 0 ? untried : all) {
      const head = best[0];
      const order =
        head === undefined
          ? -1
          : rank[replica.status] - rank[head.status] || replica.inFlight - head.inFlight;
      if (order < 0) best = [replica];
      else if (order === 0) best.push(replica);
    }
    if (best.length === 0) return undefined;
    this.turn = (this.turn + 1) % 1_000_000;
    return best[this.turn % best.length];
  }

  /** Whether a failed attempt is sent again, after a short wait when every replica was tried. */
  private async again(
    error: ServiceError,
    started: boolean,
    attempt: number,
    tried: ReadonlySet<string>,
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    // UNAVAILABLE before the worker's handler sent its headers (refused, GOAWAY, a dead process):
    // the request reached no handler. Or a handler's own "not now" (no_capacity, model_loading),
    // said before any work. An UNAVAILABLE after the headers with no code of ours is a replica
    // that died while running the call: the work may have run, so that one is the caller's error.
    const code = error.metadata?.get(errorMetadataKeys.code)[0];
    const refused = code === 'no_capacity' || code === 'model_loading';
    const retriable = error.code === GrpcStatus.UNAVAILABLE && ((!started && code === undefined) || refused);
    if (!retriable || attempt >= (this.options.maxAttempts ?? 3) || signal?.aborted) return false;
    if ([...this.members.keys()].every((address) => tried.has(address))) {
      // Every replica has said "not now": that answer, with its Retry-After, is the caller's.
      if (refused) return false;
      await sleep(Math.min(500, 100 * 2 ** (attempt - 1)));
    }
    return Date.now() < deadline && !signal?.aborted;
  }
}

/** One deadline, epoch ms, for the whole call: every attempt lives within it. */
function deadlineOf(given: CallOptions['deadline'], defaultMs: number): number {
  if (given === undefined) return Date.now() + defaultMs;
  return given instanceof Date ? given.getTime() : given;
}

function noReplica(name: string): Error {
  return fromGrpcError({ code: GrpcStatus.UNAVAILABLE, details: `no replica of ${name} resolved` });
}

function cancelled(): Error {
  return fromGrpcError({
    code: GrpcStatus.CANCELLED,
    details: 'cancelled before start',
    metadata: new Metadata(),
  });
}
