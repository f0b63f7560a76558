// Webhook test support: the sender as its own process (on the stack's NATS, with a database of its
// own and a retry schedule of milliseconds), a receiver on 127.0.0.1 that records each request's
// raw body and headers and answers as the test scripts it, verification with the official
// `standardwebhooks` package (never the project's own signing code, which is what is under test),
// and the §11 calls a key holder makes.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { NatsHandle } from '@switchboard/devcluster';
import { bearer } from './admin.js';
import type { GatewayProcess } from './gateway.js';
import { sleep } from './stack.js';
import { testUsageDatabase } from './usage-database.js';
import { startWorker, type WorkerProcess } from './worker.js';

/** The key every test gateway and sender seal and open endpoint secrets with. */
export const testWebhookSecretsKey = 'test-webhook-secrets-key-0123456789abcdef';

/**
 * Retries after 300 ms, 600 ms and 1 s: a failing delivery runs its whole course (four attempts,
 * then `failed`) in about two seconds instead of a day.
 */
export const TEST_RETRY_SCHEDULE = '300ms,600ms,1s';

export interface WebhookSettings {
  /** What the gateways get: the store, its secrets key, the exemptions (and DNS servers). */
  gatewayEnv: Record<string, string>;
  /** What every sender gets besides its NATS user: the same, plus the short retry schedule. */
  senderEnv: Record<string, string>;
}

export interface WebhookSettingsOptions {
  /** `WEBHOOK_ALLOWED_HOSTS` (default `127.0.0.1`: every receiver of the test, on any port). */
  allowedHosts?: string;
  /** `WEBHOOK_DNS_SERVERS`, for gateway and sender alike (a startDnsServer's address). */
  dnsServers?: string;
  /** More for the senders only (e.g. WEBHOOK_TIMEOUT_MS). */
  senderEnv?: Record<string, string>;
}

/** Settings for one test file's gateways and senders, around a fresh database of their own. */
export async function webhookSettings(options: WebhookSettingsOptions = {}): Promise<WebhookSettings> {
  const shared: Record<string, string> = {
    WEBHOOK_DATABASE_URL: await testUsageDatabase(),
    WEBHOOK_SECRETS_KEY: testWebhookSecretsKey,
    WEBHOOK_ALLOWED_HOSTS: options.allowedHosts ?? '127.0.0.1',
    ...(options.dnsServers === undefined ? {} : { WEBHOOK_DNS_SERVERS: options.dnsServers }),
  };
  return {
    gatewayEnv: shared,
    senderEnv: {
      ...shared,
      WEBHOOK_RETRY_SCHEDULE: TEST_RETRY_SCHEDULE,
      // A held-open request ends (and its lease with it) within seconds, not the default 15 s.
      WEBHOOK_TIMEOUT_MS: '5000',
      ...options.senderEnv,
    },
  };
}

/**
 * A sender (`services/webhooks/dist/main.js`) as its own process, as the cluster runs it, on the
 * stack's NATS as the `webhooks` user; resolves once its health says SERVING (its event stream and
 * consumer exist and its store is open). `env` goes over the settings (e.g. a replica's own).
 */
export function startSender(
  nats: NatsHandle,
  settings: WebhookSettings,
  env: Record<string, string> = {},
): Promise<WorkerProcess> {
  return startWorker('webhooks', { env: { ...nats.env('webhooks'), ...settings.senderEnv, ...env } });
}

// ── The receiver ────────────────────────────────────────────────────────────────────────────────

/** One request as the receiver got it: the bytes as sent, and every header (lower-case names). */
export interface ReceivedWebhook {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The three Standard Webhooks headers ('' when absent). */
  id: string;
  timestamp: string;
  signature: string;
  raw: Buffer;
  body: string;
  /** Date.now() when the whole body had arrived. */
  receivedAt: number;
}

/** What the receiver answers one request with. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Answer only after this long. */
  delayMs?: number;
  /** Never answer until release() (or the receiver goes down): a delivery stuck in flight. */
  hold?: boolean;
}

/** Chooses the reply to the `index`-th request (0-based). */
export type Script = (request: ReceivedWebhook, index: number) => Reply;

/** Answers `statuses` in turn, then the last of them to every later request. */
export const statuses =
  (...codes: number[]): Script =>
  (_request, index) => ({ status: codes[Math.min(index, codes.length - 1)] ?? 200 });

export interface Receiver {
  /** `http://127.0.0.1:<port>/hook` — what an endpoint is registered with. */
  readonly url: string;
  readonly port: number;
  /** Every request so far, in order of arrival. */
  readonly requests: ReceivedWebhook[];
  /** TCP connections accepted so far (one is enough to show a guard let something through). */
  readonly connections: number;
  script: Script;
  /** Answers every held request with `reply` (200 by default). */
  release(reply?: Reply): void;
  /** The `webhook-id` of every request, in order. */
  ids(): string[];
  /** Waits until `count` requests have arrived; fails naming what it saw. */
  untilCount(count: number, ms?: number): Promise<ReceivedWebhook[]>;
  /** Stops listening and drops every open connection: the endpoint refuses connections. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

/** An HTTP receiver on 127.0.0.1 (a free port), answering 200 until told otherwise. */
export async function startReceiver(script: Script = () => ({ status: 200 })): Promise<Receiver> {
  const requests: ReceivedWebhook[] = [];
  const held = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  let connections = 0;

  const answer = (res: ServerResponse, reply: Reply) => {
    held.delete(res);
    if (res.destroyed || res.writableEnded) return;
    res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain', ...reply.headers });
    res.end(reply.body ?? '');
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      const raw = Buffer.concat(chunks);
      const request: ReceivedWebhook = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers,
        id: headers['webhook-id'] ?? '',
        timestamp: headers['webhook-timestamp'] ?? '',
        signature: headers['webhook-signature'] ?? '',
        raw,
        body: raw.toString('utf8'),
        receivedAt: Date.now(),
      };
      const reply = receiver.script(request, requests.length);
      requests.push(request);
      if (reply.hold) {
        held.add(res);
        return;
      }
      if (reply.delayMs) {
        held.add(res);
        setTimeout(() => answer(res, reply), reply.delayMs);
      } else answer(res, reply);
    });
  });
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // A slow endpoint of a benchmark may hold thousands of requests at once.
  server.maxConnections = 100_000;

  const listen = async (port: number) => {
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as AddressInfo).port;
  };
  const port = await listen(0);
  const drop = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const res of held) res.destroy();
    held.clear();
    for (const socket of sockets) socket.destroy();
    await closed;
  };

  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    requests,
    get connections() {
      return connections;
    },
    script,
    release(reply = { status: 200 }) {
      for (const res of [...held]) answer(res, reply);
    },
    ids: () => requests.map((r) => r.id),
    async untilCount(count, ms = 30_000) {
      for (const started = Date.now(); requests.length < count; await sleep(20)) {
        if (Date.now() - started > ms) {
          throw new Error(
            `the receiver got ${requests.length} of ${count} requests in ${ms} ms: ${JSON.stringify(requests.map(summary))}`,
          );
        }
      }
      return requests.slice(0, count);
    },
    down: drop,
    async up() {
      await listen(port);
    },
    close: async () => {
      if (server.listening) await drop();
    },
  };
  return receiver;
}

/** A request in a failure message: its id, type and signature header, never the whole body. */
export function summary(request: ReceivedWebhook): Record<string, unknown> {
  let type: unknown;
  try {
    type = (JSON.parse(request.body) as { type?: unknown }).type;
  } catch {
    type = '(not JSON)';
  }
  return { id: request.id, type, at: request.receivedAt, signature: request.signature };
}

// ── Verification (the official library) ─────────────────────────────────────────────────────────

/** The body every delivery carries (§11). */
export interface WebhookPayload {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * The payload, once `standardwebhooks` has accepted the request as signed with `secret` (the
 * `whsec_…` the API showed): it throws WebhookVerificationError otherwise. `signature` replaces
 * the request's own header, to try one of its signatures alone.
 */
export function verifyWebhook(
  secret: string,
  request: ReceivedWebhook,
  signature = request.signature,
): WebhookPayload {
  return new Webhook(secret).verify(request.raw, {
    'webhook-id': request.id,
    'webhook-timestamp': request.timestamp,
    'webhook-signature': signature,
  }) as WebhookPayload;
}

/** Whether `standardwebhooks` accepts the request (or one `signature` of it) as signed with `secret`. */
export function verifies(secret: string, request: ReceivedWebhook, signature?: string): boolean {
  try {
    verifyWebhook(secret, request, signature);
    return true;
  } catch {
    return false;
  }
}

/** The event type of a request's body. */
export const typeOf = (request: ReceivedWebhook): string => (JSON.parse(request.body) as WebhookPayload).type;

// ── The key holder's calls (§11) ────────────────────────────────────────────────────────────────

export interface EndpointView {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  status: 'enabled' | 'disabled';
  disabled_reason?: string | null;
  created_at: string;
}

export interface CreatedEndpoint extends EndpointView {
  /** `whsec_…`, shown only in the answer to its registration. */
  secret: string;
}

export interface DeliveryView {
  id: string;
  event_id: string;
  type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  response_status: number | null;
  response_ms: number | null;
  error: string | null;
  created_at: string;
  next_attempt_at: string | null;
}

export interface DeliveryPage {
  data: DeliveryView[];
  has_more: boolean;
}

/** A `/webhooks…` call as `key`; `path` follows `/webhooks` (e.g. `''`, `/wh_1/test`). */
export function webhooksCall(
  gateway: GatewayProcess,
  key: string,
  method: string,
  path = '',
  body?: unknown,
): Promise<Response> {
  return fetch(`${gateway.url}/webhooks${path}`, {
    method,
    headers: {
      ...bearer(key),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function expectJson<T>(res: Response, status: number, what: string): Promise<T> {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** POST /webhooks, expecting its 201. */
export async function registerEndpoint(
  gateway: GatewayProcess,
  key: string,
  body: { url: string; events?: string[]; description?: string },
): Promise<CreatedEndpoint> {
  return expectJson(await webhooksCall(gateway, key, 'POST', '', body), 201, `register ${body.url}`);
}

export async function getEndpoint(gateway: GatewayProcess, key: string, id: string): Promise<EndpointView> {
  return expectJson(await webhooksCall(gateway, key, 'GET', `/${id}`), 200, `GET /webhooks/${id}`);
}

/** POST /webhooks/{id}/rotate-secret, expecting its 200. */
export async function rotateSecret(
  gateway: GatewayProcess,
  key: string,
  id: string,
  graceSeconds?: number,
): Promise<{ id: string; secret: string }> {
  const body = graceSeconds === undefined ? undefined : { grace_seconds: graceSeconds };
  return expectJson(await webhooksCall(gateway, key, 'POST', `/${id}/rotate-secret`, body), 200, 'rotate');
}

/** POST /webhooks/{id}/test, expecting its 202. */
export async function sendTestEvent(gateway: GatewayProcess, key: string, id: string): Promise<void> {
  const res = await webhooksCall(gateway, key, 'POST', `/${id}/test`);
  if (res.status !== 202) throw new Error(`POST /webhooks/${id}/test: ${res.status} ${await res.text()}`);
}

/** One page of GET /webhooks/{id}/deliveries. */
export async function listDeliveries(
  gateway: GatewayProcess,
  key: string,
  id: string,
  query: Record<string, string> = {},
): Promise<DeliveryPage> {
  const search = new URLSearchParams(query).toString();
  return expectJson(
    await webhooksCall(gateway, key, 'GET', `/${id}/deliveries${search ? `?${search}` : ''}`),
    200,
    `GET /webhooks/${id}/deliveries`,
  );
}

/**
 * Polls the endpoint's first page of deliveries until `accept` holds (every 50 ms, 30 s by
 * default); fails with what was last seen.
 */
export async function untilDeliveries(
  gateway: GatewayProcess,
  key: string,
  id: string,
  accept: (deliveries: DeliveryView[]) => boolean,
  what: string,
  ms = 30_000,
): Promise<DeliveryView[]> {
  let seen: DeliveryView[] = [];
  for (const started = Date.now(); ; await sleep(50)) {
    seen = (await listDeliveries(gateway, key, id, { limit: '100' })).data;
    if (accept(seen)) return seen;
    if (Date.now() - started > ms) {
      throw new Error(`deliveries never showed ${what} in ${ms} ms; last seen ${JSON.stringify(seen)}`);
    }
  }
}
