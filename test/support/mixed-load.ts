// A gentle, steady mix of every kind of call against one or more gateways, recording each call's
// route, timing and outcome, so a fault test can ask which calls failed, whether they were in
// flight on the faulted worker at the time, and whether everything after a moment succeeded.
import { bearer } from './admin.js';
import { dataUrl, makeFixtures, type JobView } from './animation.js';
import { toneWav } from './audio.js';
import { sleep } from './stack.js';

export type LoadRoute = 'query-stream' | 'transcribe' | 'generate-image' | 'browser' | 'animate' | 'usage';
export const loadRoutes: readonly LoadRoute[] = [
  'query-stream',
  'transcribe',
  'generate-image',
  'browser',
  'animate',
  'usage',
];

/** The worker each route's calls reach (`usage` reaches none: the gateway answers it from Postgres). */
export const workerOfRoute: Record<LoadRoute, string> = {
  'query-stream': 'llm',
  transcribe: 'whisper',
  'generate-image': 'diffusion',
  browser: 'browser',
  animate: 'animation',
  usage: 'none',
};

/** One HTTP call (for `animate`: the submission and the job followed to its end). */
export interface CallRecord {
  id: number;
  route: LoadRoute;
  /** For browser calls: `create`, `navigate`, `capture`, `close`. */
  step?: string;
  worker: string;
  /** The gateway URL it was sent to. */
  gateway: string;
  /** Date.now() when sent, and when its answer (or stream, or job) ended. */
  start: number;
  end?: number;
  /** HTTP status; undefined when the request itself failed (`networkError`). */
  status?: number;
  /** The error code of a JSON error answer. */
  code?: string;
  /** The `error` of an SSE error event in a stream that had started. */
  streamError?: { code: string; message: string };
  networkError?: string;
  /** The job of an `animate` call, and how it ended. */
  jobId?: string;
  job?: JobView;
  ok: boolean;
  /** What was wrong, in words, for failure messages. */
  detail?: string;
}

/**
 * Whether a failed call met one of the clean answers a caller gets when the worker behind it goes
 * away (docs/scaling.md): `503 unavailable` as a JSON error, or as the error event of a stream that
 * had started; once it is back, `503 model_loading` until its model has loaded (docs/api.md), or
 * that code as a stream's error event when the refusal came after the stream's first-event wait. A
 * browser session that worker held is over: its later steps are `410` (ended, e.g. `worker_gone` or
 * `shutdown`) or `404` once no worker knows it.
 */
export function failedCleanly(call: CallRecord): boolean {
  if (call.networkError !== undefined) return false;
  if (call.streamError) {
    return call.status === 200 && ['unavailable', 'model_loading'].includes(call.streamError.code);
  }
  if (call.status === 503 && (call.code === 'unavailable' || call.code === 'model_loading')) return true;
  return (
    call.route === 'browser' &&
    call.step !== 'create' &&
    ((call.status === 410 && ['session_closed', 'session_expired'].includes(call.code ?? '')) ||
      (call.status === 404 && call.code === 'not_found'))
  );
}

export interface MixedLoadOptions {
  /** Gateway URLs, used round-robin (useGateways changes them while the load runs). */
  gateways: readonly string[];
  key: string;
  /** host:port of a site the browser worker may open (test-site.ts). */
  siteOrigin?: string;
  /** Routes to run (default: every one; `browser` only with siteOrigin). */
  routes?: readonly LoadRoute[];
  /** Pause between one route's calls (default 500 ms): each route has one call open at a time. */
  gapMs?: number;
  /** Longest a job is followed (default 120 s). */
  jobTimeoutMs?: number;
}

export interface MixedLoad {
  readonly calls: readonly CallRecord[];
  /** Job ids submitted, in order. */
  readonly jobs: readonly string[];
  /** Sends later calls to these gateways only (e.g. one taken out of rotation). */
  useGateways(urls: readonly string[]): void;
  /** Calls that have ended, badly. */
  failed(): CallRecord[];
  /** Calls open at some moment of [t0, t1], of `worker` when given. */
  inFlightDuring(t0: number, t1: number, worker?: string): CallRecord[];
  /** Calls started at or after `t`. */
  startedAfter(t: number): CallRecord[];
  /** Waits until a call of `worker` is open (for a fault to hit one); returns it. */
  untilInFlight(worker: string, timeoutMs?: number): Promise<CallRecord>;
  /** Waits until every route has completed `count` more calls that succeeded. */
  untilSucceeded(count: number, timeoutMs?: number, routes?: readonly LoadRoute[]): Promise<void>;
  /** Stops sending and waits for the open calls (and followed jobs) to end. */
  stop(): Promise<void>;
  /** One line per call that failed, for assertion messages. */
  describe(records: readonly CallRecord[]): string;
}

const TERMINAL = ['succeeded', 'failed', 'canceled'];

/** The `error.code` of a JSON error body; `none` for any other body (a proxy's page, nothing). */
function errorCode(text: string): string {
  try {
    return (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? 'none';
  } catch {
    return 'none';
  }
}

/**
 * The still the animate calls move: an image the key generated (`/api/images/…`), which the jobs
 * name rather than upload (s3rver lacks the multipart listing a streamed upload starts with), or a
 * data URL where no diffusion worker runs.
 */
async function animationImage(options: MixedLoadOptions): Promise<string> {
  const res = await fetch(`${options.gateways[0]}/generate-image`, {
    method: 'POST',
    headers: { ...bearer(options.key), 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'a portrait', width: 64, height: 64, steps: 2, seed: 2 }),
  });
  if (res.ok) return ((await res.json()) as { url: string }).url;
  const fixtures = await makeFixtures();
  try {
    return dataUrl('image/png', fixtures.png);
  } finally {
    await fixtures.remove();
  }
}

export async function startMixedLoad(options: MixedLoadOptions): Promise<MixedLoad> {
  const routes = (options.routes ?? loadRoutes).filter((r) => r !== 'browser' || options.siteOrigin);
  const image = routes.includes('animate') ? await animationImage(options) : '';
  const wav = toneWav(1);
  const gap = options.gapMs ?? 500;
  const jobTimeout = options.jobTimeoutMs ?? 120_000;
  let gateways = [...options.gateways];
  let turn = 0;
  let running = true;
  let nextId = 1;
  const calls: CallRecord[] = [];
  const jobs: string[] = [];
  const auth = bearer(options.key);

  const nextGateway = () => gateways[turn++ % gateways.length]!;

  /** Sends one call and records it; `read` turns a 2xx answer into success or a reason. */
  async function record(
    route: LoadRoute,
    send: (gateway: string) => Promise<Response>,
    read: (res: Response, call: CallRecord) => Promise<void>,
    step?: string,
  ): Promise<CallRecord> {
    const gateway = nextGateway();
    const call: CallRecord = {
      id: nextId++,
      route,
      step,
      worker: workerOfRoute[route],
      gateway,
      start: Date.now(),
      ok: false,
    };
    calls.push(call);
    try {
      const res = await send(gateway);
      call.status = res.status;
      if (res.ok) await read(res, call);
      else {
        const text = await res.text();
        call.code = errorCode(text);
        call.detail = `${res.status} ${text.slice(0, 300)}`;
      }
      call.ok = res.ok && call.detail === undefined;
    } catch (error) {
      call.networkError = (error as Error).message + ((error as { cause?: Error }).cause?.message ?? '');
      call.detail = call.detail ?? `request failed: ${call.networkError}`;
    }
    call.end = Date.now();
    return call;
  }

  const post = (gateway: string, path: string, body: unknown) =>
    fetch(`${gateway}${path}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const drain = async (res: Response) => void (await res.arrayBuffer());

  const queryStream = () =>
    record(
      'query-stream',
      (g) => post(g, '/query', { prompt: 'Once upon a time', max_tokens: 120, temperature: 0, stream: true }),
      async (res, call) => {
        const events = (await res.text())
          .split('\n\n')
          .filter((e) => e.startsWith('data: '))
          .map((e) => e.slice('data: '.length));
        for (const event of events) {
          if (event === '[DONE]') continue;
          const parsed = JSON.parse(event) as { error?: { code: string; message: string } };
          if (parsed.error) call.streamError = parsed.error;
        }
        if (call.streamError) call.detail = `stream error ${JSON.stringify(call.streamError)}`;
        else if (events.at(-1) !== '[DONE]' || !events.some((e) => e.includes('finish_reason')))
          call.detail = 'stream ended without a finish event and [DONE]';
      },
    );

  const transcribe = () =>
    record(
      'transcribe',
      (g) => {
        const form = new FormData();
        form.append('format', 'json');
        form.append('file', new Blob([wav]), 'tone.wav');
        return fetch(`${g}/transcribe`, { method: 'POST', headers: auth, body: form });
      },
      drain,
    );

  const generateImage = () =>
    record(
      'generate-image',
      (g) => post(g, '/generate-image', { prompt: 'a lighthouse', width: 64, height: 64, steps: 4, seed: 1 }),
      drain,
    );

  const usage = () => record('usage', (g) => fetch(`${g}/usage`, { headers: auth }), drain);

  const browser = async () => {
    let session: string | undefined;
    const create = await record(
      'browser',
      (g) => post(g, '/api/browser/session/create', { viewport_width: 400, viewport_height: 300 }),
      async (res) => {
        session = ((await res.json()) as { session_id: string }).session_id;
      },
      'create',
    );
    if (!create.ok || !session) return;
    const id = session;
    const steps: [string, unknown][] = [
      ['navigate', { url: `${options.siteOrigin}/form` }],
      ['capture', {}],
    ];
    for (const [step, body] of steps) {
      const call = await record(
        'browser',
        (g) => post(g, `/api/browser/session/${id}/${step}`, body),
        drain,
        step,
      );
      if (!call.ok) break;
    }
    await record('browser', (g) => post(g, `/api/browser/session/${id}/close`, {}), drain, 'close');
  };

  const animate = () =>
    record(
      'animate',
      (g) => post(g, '/animate', { backend: 'video-diffusion', image, fps: 4, duration_s: 1, seed: 3 }),
      async (res, call) => {
        const { job_id: jobId } = (await res.json()) as { job_id: string };
        call.jobId = jobId;
        jobs.push(jobId);
        // Followed through any gateway, as a client would after a fault; 503s are waited through.
        for (const deadline = Date.now() + jobTimeout; Date.now() < deadline; await sleep(250)) {
          const view = await fetch(`${nextGateway()}/animate/${jobId}`, { headers: auth }).then(
            async (r) => (r.ok ? ((await r.json()) as JobView) : undefined),
            () => undefined,
          );
          if (view && TERMINAL.includes(view.status)) {
            call.job = view;
            if (view.status !== 'succeeded')
              call.detail = `job ${view.status}: ${JSON.stringify(view.error)}`;
            return;
          }
        }
        call.detail = `job ${jobId} not finished within ${jobTimeout} ms`;
      },
    );

  const runners: Record<LoadRoute, () => Promise<unknown>> = {
    'query-stream': queryStream,
    transcribe,
    'generate-image': generateImage,
    browser,
    animate,
    usage,
  };
  const loops = routes.map(async (route, index) => {
    // Staggered, so the routes do not all start in the same instant.
    await sleep(index * 50);
    while (running) {
      await runners[route]();
      await sleep(gap);
    }
  });

  const ended = (c: CallRecord) => c.end !== undefined;
  const describe = (records: readonly CallRecord[]) =>
    records
      .map(
        (c) =>
          `#${c.id} ${c.route}${c.step ? `/${c.step}` : ''} via ${c.gateway} ` +
          `[${c.start}..${c.end ?? 'open'}]: ${c.detail ?? 'ok'}`,
      )
      .join('\n');
  return {
    calls,
    jobs,
    useGateways(urls) {
      gateways = [...urls];
    },
    failed: () => calls.filter((c) => ended(c) && !c.ok),
    inFlightDuring: (t0, t1, worker) =>
      calls.filter(
        (c) => c.start <= t1 && (c.end ?? Infinity) >= t0 && (worker === undefined || c.worker === worker),
      ),
    startedAfter: (t) => calls.filter((c) => c.start >= t),
    async untilInFlight(worker, timeoutMs = 60_000) {
      for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(20)) {
        const open = calls.find((c) => c.worker === worker && !ended(c));
        if (open) return open;
      }
      throw new Error(`no ${worker} call in flight within ${timeoutMs} ms`);
    },
    async untilSucceeded(count, timeoutMs = 120_000, only = routes) {
      const since = Date.now();
      const done = () =>
        only.every((r) => calls.filter((c) => c.route === r && c.start >= since && c.ok).length >= count);
      for (const deadline = Date.now() + timeoutMs; !done(); await sleep(100)) {
        if (Date.now() > deadline) {
          const behind = only.filter(
            (r) => calls.filter((c) => c.route === r && c.start >= since && c.ok).length < count,
          );
          const lastFailures = behind.map((r) => calls.findLast((c) => c.route === r && c.end && !c.ok));
          throw new Error(
            `routes without ${count} successes since ${since}: ${behind.join(', ')}\n` +
              describe(lastFailures.filter((c) => c !== undefined)),
          );
        }
      }
    },
    async stop() {
      running = false;
      await Promise.all(loops);
    },
    describe,
  };
}
