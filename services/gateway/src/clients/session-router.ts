import {
  Browser,
  type BrowserClient,
  type CaptureResponse__Output,
  type ContentRequest,
  type ContentResponse__Output,
  type CreateSessionRequest,
  type NavigateResponse__Output,
  type InputResponse__Output,
  type PdfRequest,
  type PdfResponse__Output,
  type Session__Output,
  type SubmitResponse__Output,
} from '@switchboard/contracts';
import type { BrowserFleet, SessionRecord } from '@switchboard/browser-registry';
import { SwitchboardError, dependencyUnavailable } from '@switchboard/errors';
import { callMetadata, createClient, ReplicaPool, unary, type UnaryMethod } from '@switchboard/grpc';
import type { Logger } from '@switchboard/telemetry';
import type { CallContext } from './call-context.js';
import { endpointClientOptions, type WorkerEndpoint } from './worker-endpoint.js';
import { countsAsWaiting, fairShare, shareAllows } from '../sessions/capacity-share.js';

export type Session = Session__Output;

/** A session's registry record (owner, worker addresses) and its status with the worker's liveness applied. */
export interface SessionRoute {
  record: SessionRecord;
  status: string;
}

const NO_CAPACITY_RETRY_AFTER_S = 5;
/**
 * How long the owner of an active session whose heartbeat looks late may take to say it still
 * holds it: a dead worker refuses at once, a lost one costs this much.
 */
const LATE_HEARTBEAT_CONFIRM_MS = 2_000;

/** BROWSER_KEY_CAPACITY_SHARE's default, for an endpoint that does not carry the setting. */
export const DEFAULT_KEY_CAPACITY_SHARE = 0.5;

/**
 * The browser endpoint of the gateway's config: where the workers are, plus the share of the
 * cluster's browsers one key may hold while others wait (config.ts keeps it beside the address).
 */
export type BrowserEndpoint = WorkerEndpoint & { keyCapacityShare?: number };

/** The cluster's browsers for the admin status: capacity, use, and who holds them. */
export interface BrowserCapacityStatus {
  capacity: number;
  in_use: number;
  key_capacity_share: number;
  fair_share: number;
  sessions_by_key: Record<string, number>;
  waiting_keys: string[];
}

/** A transport failure (worker gone) rather than an answer the worker gave. */
function isWorkerGone(error: unknown): boolean {
  return error instanceof SwitchboardError && error.code === 'unavailable' && error.cause !== undefined;
}

/** A session whose worker is gone has ended as `expired`, as far as its last record tells. */
const endedWithWorker = (last: Session): Session =>
  last.status === 'active' ? { ...last, status: 'expired', end_reason: 'worker_gone' } : last;

/** What an action on an ended session answers (410 session_ended), saying why as `details` does. */
const endedSessionError = (route: SessionRoute) => {
  if (route.status !== 'closed') return new SwitchboardError('session_expired');
  const reason = route.record.session.end_reason;
  return new SwitchboardError(
    'session_closed',
    reason ? { message: `The browser session is closed (end_reason: ${reason}).` } : {},
  );
};

/**
 * The browser session router: the gateway's one door to the browser workers. Sessions are
 * sticky: the session registry says which worker owns each one, and every call goes to that
 * worker (one gRPC channel per worker process) after the ownership check. New sessions go to the
 * live worker with the most free capacity, within the key's tier limit over the whole cluster (a
 * create that loses a race with another replica is undone), and a session's status is rewritten
 * from its worker's liveness.
 */
export class SessionRouter {
  /**
   * The configured address (a Service in Kubernetes), resolved as the model workers' names are
   * (through WORKER_DNS_SERVER when set): health checks and the fallback for create.
   */
  readonly fallback: ReplicaPool<BrowserClient>;
  private readonly byWorker = new Map<string, { address: string; client: BrowserClient }>();
  private readonly share: number;

  constructor(
    private readonly endpoint: BrowserEndpoint,
    private readonly logger: Logger,
    private readonly fleet: BrowserFleet,
    routing: { dnsServer?: string | undefined; resolveIntervalMs?: number } = {},
  ) {
    this.fallback = new ReplicaPool(Browser, endpoint.address, {
      ...endpointClientOptions(endpoint, logger),
      dnsServer: routing.dnsServer,
      resolveIntervalMs: routing.resolveIntervalMs,
    });
    this.share = endpoint.keyCapacityShare ?? DEFAULT_KEY_CAPACITY_SHARE;
  }

  /**
   * Creates a session on the emptiest worker, within the key's tier limit over the whole cluster
   * and, while other keys wait for a browser, within its share of the cluster (capacity-share.ts).
   */
  async create(request: CreateSessionRequest, sessionLimit: number, ctx: CallContext): Promise<Session> {
    if (this.fleet.activeSessionsOf(ctx.keyId).length >= sessionLimit) throw sessionLimitError(sessionLimit);
    this.checkShare(ctx.keyId, 0);
    let session: Session;
    try {
      session = await this.placeSession(request, ctx);
    } catch (error) {
      if (error instanceof SwitchboardError && error.code === 'no_capacity')
        await this.noteRefusal(ctx.keyId);
      throw error;
    }
    // Two creates racing on two replicas can both pass the first checks; the loser gives way. A
    // key at its share that took the browser another key was just refused on gives it back.
    try {
      if (this.fleet.activeSessionsOf(ctx.keyId).length > sessionLimit) throw sessionLimitError(sessionLimit);
      this.checkShare(ctx.keyId, 1);
    } catch (error) {
      await this.close(session.session_id, ctx).catch(() => undefined);
      throw error;
    }
    this.fleet.clearRefusal(ctx.keyId);
    return session;
  }

  /** The cluster's browsers and each key's sessions, as this replica's registry view shows them. */
  capacityStatus(): BrowserCapacityStatus {
    const usage = this.fleet.usage();
    return {
      capacity: usage.capacity,
      in_use: usage.inUse,
      key_capacity_share: this.share,
      fair_share: fairShare(usage.capacity, this.share),
      sessions_by_key: Object.fromEntries(usage.sessionsByKey),
      waiting_keys: this.fleet.waitingKeys(),
    };
  }

  /**
   * Refuses a session the key may not take under its share; `justTaken` is 1 when the session
   * being checked is already among the key's own (the check after placement).
   */
  private checkShare(keyId: string, justTaken: 0 | 1): void {
    const usage = this.fleet.usage();
    const held = (usage.sessionsByKey.get(keyId) ?? 0) - justTaken;
    const waitingKeys = this.fleet.waitingKeys().filter((k) => k !== keyId).length;
    if (shareAllows({ capacity: usage.capacity, held, waitingKeys }, this.share)) return;
    throw new SwitchboardError('no_capacity', {
      message: `This key already holds ${held} of the cluster's ${usage.capacity} browsers, its share while other keys wait for one; retry later.`,
      retryAfterSeconds: NO_CAPACITY_RETRY_AFTER_S,
    });
  }

  /** A key below its share that found no browser is waiting: keys at their share now give way. */
  private async noteRefusal(keyId: string): Promise<void> {
    const usage = this.fleet.usage();
    const held = usage.sessionsByKey.get(keyId) ?? 0;
    if (countsAsWaiting({ capacity: usage.capacity, held }, this.share))
      await this.fleet.recordRefusal(keyId);
  }

  /**
   * Creates the session on the live worker with the most free sessions (with none live, on one
   * whose heartbeat is only late). A worker found gone is dropped from placement and the next one
   * tried, so a crash costs no create its 6 s of staleness.
   */
  private async placeSession(request: CreateSessionRequest, ctx: CallContext): Promise<Session> {
    for (;;) {
      const anyLive = this.fleet.liveWorkers().length > 0;
      const worker = anyLive ? this.fleet.pickWorker() : this.fleet.pickLateWorker();
      if (!worker) {
        if (anyLive) {
          throw new SwitchboardError('no_capacity', { retryAfterSeconds: NO_CAPACITY_RETRY_AFTER_S });
        }
        // No worker has announced itself (yet): the configured address may still serve.
        return this.fallback.unary((client) => client.CreateSession.bind(client), request, callMetadata(ctx));
      }
      const client = this.clientFor(worker);
      let session: Session;
      try {
        session = await unary(client.CreateSession.bind(client), request, callMetadata(ctx));
      } catch (error) {
        if (!isWorkerGone(error)) throw error;
        this.logger.warn({ worker_id: worker.worker_id }, 'browser worker unreachable; placing elsewhere');
        this.fleet.forgetWorker(worker.worker_id);
        continue;
      }
      this.fleet.remember({
        session,
        worker_id: worker.worker_id,
        grpc_address: worker.grpc_address,
        devtools_address: worker.devtools_address,
        updated_at_ms: Date.now(),
      });
      return session;
    }
  }

  navigate(
    request: { session_id: string; url: string },
    ctx: CallContext,
  ): Promise<NavigateResponse__Output> {
    return this.act(request.session_id, ctx, (c) => c.Navigate.bind(c), request);
  }

  input(
    request: { session_id: string; selector: string; text: string },
    ctx: CallContext,
  ): Promise<InputResponse__Output> {
    return this.act(request.session_id, ctx, (c) => c.Input.bind(c), request);
  }

  submit(
    request: { session_id: string; selector: string },
    ctx: CallContext,
  ): Promise<SubmitResponse__Output> {
    return this.act(request.session_id, ctx, (c) => c.Submit.bind(c), request);
  }

  capture(sessionId: string, ctx: CallContext): Promise<CaptureResponse__Output> {
    return this.act(sessionId, ctx, (c) => c.Capture.bind(c), { session_id: sessionId });
  }

  content(
    request: ContentRequest & { session_id: string },
    ctx: CallContext,
  ): Promise<ContentResponse__Output> {
    return this.act(request.session_id, ctx, (c) => c.Content.bind(c), request);
  }

  pdf(request: PdfRequest & { session_id: string }, ctx: CallContext): Promise<PdfResponse__Output> {
    return this.act(request.session_id, ctx, (c) => c.Pdf.bind(c), request);
  }

  /** Details of a session whose worker is gone come from its last record, as `expired`. */
  async details(sessionId: string, ctx: CallContext): Promise<Session> {
    const route = await this.route(sessionId, ctx);
    const ended = route.status !== route.record.session.status;
    if (ended && !(await this.ownerHolds(route, ctx))) return endedWithWorker(route.record.session);
    try {
      return await this.call(route, (c) => c.GetDetails.bind(c), { session_id: sessionId }, ctx);
    } catch (error) {
      if (!isWorkerGone(error)) throw error;
      return endedWithWorker(route.record.session);
    }
  }

  /** Closing is idempotent: an ended session (or one whose worker is gone) answers its state. */
  async close(sessionId: string, ctx: CallContext): Promise<Session> {
    const route = await this.route(sessionId, ctx);
    if (route.status !== 'active') return endedWithWorker(route.record.session);
    try {
      const closed = await this.call(route, (c) => c.CloseSession.bind(c), { session_id: sessionId }, ctx);
      // This replica counts the session as ended at once (tier limits), not when the watch says so.
      this.fleet.remember({ ...route.record, session: closed, updated_at_ms: Date.now() });
      return closed;
    } catch (error) {
      if (!isWorkerGone(error)) throw error;
      return endedWithWorker(route.record.session);
    }
  }

  /**
   * The session's owner and state, after the ownership check: someone else's session and a
   * missing one are the same 404.
   */
  async route(sessionId: string, ctx: Pick<CallContext, 'keyId'>): Promise<SessionRoute> {
    let record: SessionRecord | null;
    try {
      record = await this.fleet.session(sessionId);
    } catch (error) {
      throw dependencyUnavailable('The session registry is unavailable.', error);
    }
    if (!record || record.session.owner_key_id !== ctx.keyId) throw new SwitchboardError('session_not_found');
    return { record, status: this.fleet.effectiveStatus(record) };
  }

  /**
   * The `host:port` of the DevTools relay of the worker that owns the caller's session; 404 for
   * a session that is missing or someone else's, 410 for an ended one.
   */
  async devtoolsAddress(sessionId: string, keyId: string): Promise<string> {
    const route = await this.route(sessionId, { keyId });
    if (route.status !== 'active') throw endedSessionError(route);
    return route.record.devtools_address;
  }

  /** Every session in the registry, for the admin dashboard. */
  listSessions(): Session[] {
    return this.fleet.allSessions().map((r) => ({ ...r.session, status: this.fleet.effectiveStatus(r) }));
  }

  /** Closes every channel, the per-worker ones included. */
  closeChannels(): void {
    this.fallback.close();
    for (const { client } of this.byWorker.values()) client.close();
  }

  /** An action (navigate, input, submit, capture): 410 for an ended session or a dead worker. */
  private async act<Req, Res>(
    sessionId: string,
    ctx: CallContext,
    method: (client: BrowserClient) => UnaryMethod<Req, Res>,
    request: Req,
  ): Promise<Res> {
    const route = await this.route(sessionId, ctx);
    if (!(await this.ownerHolds(route, ctx))) throw endedSessionError(route);
    try {
      return await this.call(route, method, request, ctx);
    } catch (error) {
      // Its worker died since the last heartbeat: the session died with it.
      if (isWorkerGone(error)) throw new SwitchboardError('session_expired');
      throw error;
    }
  }

  /**
   * Whether the session is active on its worker. The registry decides, except for a session it
   * lists as active on a worker whose heartbeat is late by this replica's clock: a busy worker or
   * a lagging watch delays heartbeats without ending anything, so the worker is asked first.
   */
  private async ownerHolds(route: SessionRoute, ctx: CallContext): Promise<boolean> {
    if (route.status === 'active') return true;
    if (route.record.session.status !== 'active' || this.replaced(route.record)) return false;
    const client = this.clientFor(route.record);
    const held = await unary(
      client.GetDetails.bind(client),
      { session_id: route.record.session.session_id },
      callMetadata(ctx),
      { deadline: Date.now() + LATE_HEARTBEAT_CONFIRM_MS },
    ).catch(() => undefined);
    return held?.status === 'active';
  }

  private call<Req, Res>(
    route: SessionRoute,
    method: (client: BrowserClient) => UnaryMethod<Req, Res>,
    request: Req,
    ctx: CallContext,
  ): Promise<Res> {
    return unary(method(this.clientFor(route.record)), request, callMetadata(ctx));
  }

  /**
   * One channel per worker process, not per address. A worker restarted on its predecessor's
   * address gets a fresh channel, which connects at once, instead of one still backing off from
   * the refusals it met while the address was down: that one would fail the new worker's sessions
   * fast, as if it were gone. The predecessor's channel is closed then.
   */
  private clientFor(worker: { worker_id: string; grpc_address: string }): BrowserClient {
    // Its address serves a later process now, which a call meant for it must not reach (nor take
    // that process's channel from it).
    if (this.replaced(worker)) {
      throw new SwitchboardError('unavailable', {
        cause: new Error(`browser worker ${worker.worker_id} was replaced at ${worker.grpc_address}`),
      });
    }
    const known = this.byWorker.get(worker.worker_id);
    if (known) return known.client;
    for (const [id, { address, client }] of this.byWorker) {
      if (address !== worker.grpc_address) continue;
      client.close();
      this.byWorker.delete(id);
    }
    const client = createClient(Browser, worker.grpc_address, {
      ...endpointClientOptions(this.endpoint, this.logger),
      // One attempt: a worker that refuses connections is gone, and its sessions with it.
      maxAttempts: 1,
    });
    this.byWorker.set(worker.worker_id, { address: worker.grpc_address, client });
    return client;
  }

  /** Whether another worker has announced itself from this worker's address since. */
  private replaced(worker: { worker_id: string; grpc_address: string }): boolean {
    const holder = this.fleet.workerAt(worker.grpc_address);
    return holder !== undefined && holder !== worker.worker_id;
  }
}

function sessionLimitError(limit: number): SwitchboardError {
  return new SwitchboardError('session_limit', {
    message: `This key already has ${limit} active browser session${limit === 1 ? '' : 's'}, its tier's limit.`,
  });
}
