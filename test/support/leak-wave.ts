// One wave of the traffic that leaves things behind when a service forgets to clean up: browser
// sessions opened and closed, streamed queries (some dropped by the client mid-stream), uploads
// (some cut off mid-body by a client that goes away) and animation jobs (some canceled). Every
// call is spread over the gateways in turn; the wave reports what went wrong rather than throwing,
// so a test can list every failure at once.
import { connect } from 'node:net';
import { bearer } from './admin.js';
import { toneWav } from './audio.js';
import { acceptedJobId, submit, waitForJob } from './animation.js';
import type { GatewayProcess } from './gateway.js';

export interface WaveCounts {
  sessions: number;
  queries: number;
  uploads: number;
  jobs: number;
}

export interface WaveTargets {
  gateways: readonly GatewayProcess[];
  key: string;
  /** A page the browser workers may open. */
  pageUrl: string;
  /**
   * The animation jobs' image: a `/api/images/…` URL the key got from /generate-image, or a
   * `data:` URL.
   */
  image: string;
}

export interface WaveResult {
  /** `route: what happened`, one line per call that did not end as it should. */
  failures: string[];
  /** Session creates that answered 503 and were sent again. */
  createRetries: number;
  wallMs: number;
}

/** Every `every`-th item (from the first) is the one a client gives up on. */
const dropped = (i: number, every: number) => i % every === 0;

/** Runs `count` tasks, `parallel` at a time. */
async function pool(count: number, parallel: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, lane));
}

/**
 * A create that found no browser ready retried as a client would (a 503 says "try again"): on a
 * starved machine a Chromium launch can take longer than the worker waits for it, which is not
 * what this wave looks for. Each retry is counted, so a run shows how often it happened.
 */
let createRetries = 0;
async function withRetries<T>(create: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await create();
    } catch (error) {
      if (attempt >= 3 || !/→ 503 /.test((error as Error).message)) throw error;
      createRetries++;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}

/** Creates a session, opens the page, captures it, closes it. */
async function browserSession(gateway: GatewayProcess, t: WaveTargets): Promise<void> {
  const call = async (path: string, body: unknown, want: number) => {
    const res = await fetch(`${gateway.url}/api/browser${path}`, {
      method: 'POST',
      headers: { ...bearer(t.key), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== want)
      throw new Error(`${path.replace(/[0-9a-f-]{36}/, ':id')} → ${res.status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const created = await withRetries(() =>
    call('/session/create', { viewport_width: 640, viewport_height: 480 }, 201),
  );
  const id = created.session_id as string;
  try {
    await call(`/session/${id}/navigate`, { url: t.pageUrl }, 200);
    await call(`/session/${id}/capture`, {}, 200);
  } finally {
    await call(`/session/${id}/close`, {}, 200);
  }
}

/**
 * A streamed query read to `[DONE]`, or, when `abandon`, dropped by the client right after the
 * first token arrives (the worker must stop generating and free what the stream held).
 */
async function streamedQuery(gateway: GatewayProcess, t: WaveTargets, abandon: boolean): Promise<void> {
  const controller = new AbortController();
  const res = await fetch(`${gateway.url}/query`, {
    method: 'POST',
    headers: { ...bearer(t.key), 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'Once upon a time', stream: true, max_tokens: abandon ? 200 : 12 }),
    signal: controller.signal,
  });
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  const decoder = new TextDecoder();
  let text = '';
  try {
    for await (const chunk of res.body!) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      if (text.includes('"error"')) throw new Error(`stream error: ${text.slice(-300)}`);
      if (abandon && text.includes('"delta"')) {
        controller.abort();
        return;
      }
    }
  } catch (error) {
    if (controller.signal.aborted) return;
    throw error;
  }
  if (!text.includes('data: [DONE]')) throw new Error(`stream ended without [DONE]: ${text.slice(-300)}`);
}

const BOUNDARY = 'leak-wave-boundary';

/** A `multipart/form-data` body with `audio` as its `file` part. */
function transcribeBody(audio: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="tone.wav"\r\n` +
        'Content-Type: audio/wav\r\n\r\n',
    ),
    audio,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

/**
 * An upload cut off mid-body: the client sends the headers and half the form over a raw socket,
 * then closes it, as a client whose connection drops would.
 */
async function cutUpload(gateway: GatewayProcess, t: WaveTargets, body: Buffer): Promise<void> {
  const socket = connect(gateway.port, '127.0.0.1');
  socket.on('error', () => undefined); // the gateway may answer or reset first: both are fine
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.write(
    `POST /transcribe HTTP/1.1\r\nHost: 127.0.0.1:${gateway.port}\r\nAuthorization: Bearer ${t.key}\r\n` +
      `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${body.length}\r\n\r\n`,
  );
  socket.write(body.subarray(0, Math.floor(body.length / 2)));
  // Long enough for the gateway to open its stream to the worker and pass the first half on.
  await new Promise((resolve) => setTimeout(resolve, 200));
  socket.destroy();
}

async function upload(gateway: GatewayProcess, t: WaveTargets, body: Buffer): Promise<void> {
  const res = await fetch(`${gateway.url}/transcribe`, {
    method: 'POST',
    headers: { ...bearer(t.key), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    body,
  });
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  await res.text();
}

/** A short video-diffusion job followed to its end, or canceled soon after it was accepted. */
async function animationJob(gateway: GatewayProcess, t: WaveTargets, cancel: boolean): Promise<void> {
  const body = { backend: 'video-diffusion', image: t.image, fps: 2, duration_s: 1 };
  const jobId = await acceptedJobId(await submit(gateway, t.key, body));
  if (cancel) {
    const res = await fetch(`${gateway.url}/animate/${jobId}`, { method: 'DELETE', headers: bearer(t.key) });
    // A job that finished first is a 409; either way it must end.
    if (res.status !== 200 && res.status !== 409)
      throw new Error(`cancel → ${res.status} ${await res.text()}`);
    await res.text();
  }
  const job = await waitForJob(gateway, t.key, jobId, undefined, 180_000);
  const wanted = cancel ? ['canceled', 'succeeded'] : ['succeeded'];
  if (!wanted.includes(job.status)) throw new Error(`job ${job.status}: ${JSON.stringify(job.error)}`);
}

/**
 * Runs one wave: the four kinds of traffic side by side, each with a few calls at a time. A burst
 * sends every call of each kind at once instead, none given up on: the most any worker is asked
 * to hold together.
 */
export async function runWave(t: WaveTargets, counts: WaveCounts, burst = false): Promise<WaveResult> {
  const started = Date.now();
  const retriesBefore = createRetries;
  const failures: string[] = [];
  const gatewayOf = (i: number) => t.gateways[i % t.gateways.length]!;
  const attempt = (route: string, call: () => Promise<unknown>) =>
    call().then(
      () => undefined,
      (error: Error) => void failures.push(`${route}: ${error.message}`),
    );
  const audio = transcribeBody(toneWav(2));
  // pool() never runs more lanes than it has calls.
  const lanes = (parallel: number) => (burst ? Number.POSITIVE_INFINITY : parallel);
  const given = (i: number, every: number) => !burst && dropped(i, every);
  await Promise.all([
    pool(counts.sessions, lanes(3), (i) => attempt('browser', () => browserSession(gatewayOf(i), t))),
    pool(counts.queries, lanes(6), (i) =>
      attempt('query', () => streamedQuery(gatewayOf(i), t, given(i, 4))),
    ),
    pool(counts.uploads, lanes(3), (i) =>
      attempt('transcribe', () =>
        given(i, 3) ? cutUpload(gatewayOf(i), t, audio) : upload(gatewayOf(i), t, audio),
      ),
    ),
    pool(counts.jobs, lanes(4), (i) => attempt('animate', () => animationJob(gatewayOf(i), t, given(i, 3)))),
  ]);
  return { failures, createRetries: createRetries - retriesBefore, wallMs: Date.now() - started };
}
