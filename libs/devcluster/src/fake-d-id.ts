// A local stand-in for the D-ID Talks API, in its real wire format: the one third-party service
// the local cluster (SWITCHBOARD_FAKE_AVATAR=1) and the tests may fake. A real HTTP server on
// 127.0.0.1:
//
//   POST /images  multipart `image` (PNG/JPEG)  → 201 {id, url: "s3://d-id-images-prod/…"}
//   POST /audios  multipart `audio`             → 201 {id, url: "s3://d-id-audios-prod/…", duration}
//   POST /talks   {source_url, script, config}   → 201 {id: "tlk_…", object: "talk", status: "created"}
//   GET  /talks/{id} → created → started → done (result_url, duration) | error | rejected
//   GET  /results/{id}.mp4?…&Signature=…        the video, pre-signed like S3 (no Basic auth)
//   errors → {kind, description, details}; Basic auth on every API call (401 AuthorizationError).
//
// The video is made with ffmpeg: the uploaded picture held for the length of the uploaded audio
// (or of a tone standing in for text-to-speech), H.264 at 25 fps with AAC sound. Switches set per
// instance and changeable at any time inject the failures a real vendor has (see FakeDidSwitches).
// Every request is recorded (method, path, whether the auth was right) so tests assert the calls.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { runTool } from './run-tool.js';

export type TalkOutcome = 'done' | 'never' | 'error' | 'rejected';

export interface FakeDidSwitches {
  /** Answer every API call 401 AuthorizationError, whatever key it carries. */
  unauthorized: boolean;
  /** Answer POST /talks 400 ValidationError (with `details`), whatever the body. */
  validationError: boolean;
  /** Answer this many API calls 429 with `Retry-After: retryAfterSeconds`, then go on normally. */
  rateLimited: number;
  retryAfterSeconds: number;
  /** Answer this many API calls 500, then go on normally. */
  serverErrors: number;
  /** Which calls the 429s/500s hit: a prefix of `METHOD /path` (`''` = every API call). */
  faultsOn: string;
  /** Hold each GET /talks/{id} this long before answering (a slow vendor). */
  pollDelayMs: number;
  /** Polls answered `created`, then polls answered `started`, before a talk ends. */
  createdPolls: number;
  startedPolls: number;
  /** How talks end: `done`, `never` (stays `started`), `error`, `rejected`. */
  outcome: TalkOutcome;
  /** Length of the speech the fake "synthesises" for a text script. */
  textSeconds: number;
}

export const defaultSwitches: Readonly<FakeDidSwitches> = {
  unauthorized: false,
  validationError: false,
  rateLimited: 0,
  retryAfterSeconds: 1,
  serverErrors: 0,
  faultsOn: '',
  pollDelayMs: 0,
  createdPolls: 1,
  startedPolls: 1,
  outcome: 'done',
  textSeconds: 2,
};

export interface FakeDidRequest {
  readonly method: string;
  /** Without the query string (a result URL's signature stays out of the record). */
  readonly path: string;
  /** `ok`: `Authorization: Basic <key>`; `wrong`: another value; `missing`: none. */
  readonly auth: 'ok' | 'wrong' | 'missing';
  status: number;
}

export interface FakeDidOptions {
  /** The key callers must send as `Authorization: Basic <apiKey>`; default a random one. */
  apiKey?: string;
  /** Default 0 (a free port). */
  port?: number;
  ffmpeg?: string;
  ffprobe?: string;
  switches?: Partial<FakeDidSwitches>;
}

export interface FakeDid {
  /** `http://127.0.0.1:<port>`, the base URL to give the adapter. */
  readonly url: string;
  readonly apiKey: string;
  readonly requests: FakeDidRequest[];
  /** Every POST /talks body as received (parsed JSON), oldest first. */
  readonly talkBodies: unknown[];
  readonly switches: Readonly<FakeDidSwitches>;
  set(changes: Partial<FakeDidSwitches>): void;
  close(): Promise<void>;
}

interface Upload {
  readonly bytes: Buffer;
  readonly filename: string;
}

interface Talk {
  readonly id: string;
  readonly createdAt: string;
  readonly body: { source_url: string; script: Record<string, unknown> };
  readonly signature: string;
  polls: number;
  /** Set when ffmpeg has made the video; `failure` when it could not. */
  video?: { path: string; duration: number };
  failure?: { kind: string; description: string };
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly kind: string,
    description: string,
    readonly details?: unknown,
  ) {
    super(description);
  }
}

const newId = (prefix: string) => `${prefix}${randomBytes(16).toString('base64url').slice(0, 21)}`;

async function run(binary: string, args: string[], signal: AbortSignal): Promise<string> {
  return (await runTool(binary, args, { signal })).stdout;
}

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new HttpError(413, 'PayloadTooLargeError', 'request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const validation = (field: string, message: string) =>
  new HttpError(400, 'ValidationError', 'validation failed', { [`body.${field}`]: { message } });

/** The talk body checks D-ID documents: source_url, and a script of a known type with its fields. */
function checkTalkBody(body: unknown): Talk['body'] {
  if (typeof body !== 'object' || body === null) throw validation('', 'body must be a JSON object');
  const { source_url: source, script } = body as Record<string, unknown>;
  if (typeof source !== 'string' || !source) throw validation('source_url', "'source_url' is required");
  if (typeof script !== 'object' || script === null) throw validation('script', "'script' is required");
  const s = script as Record<string, unknown>;
  if (s.type === 'audio') {
    if (typeof s.audio_url !== 'string') throw validation('script.audio_url', "'audio_url' is required");
  } else if (s.type === 'text') {
    if (typeof s.input !== 'string' || !s.input) throw validation('script.input', "'input' is required");
    const provider = s.provider as Record<string, unknown> | undefined;
    if (
      provider !== undefined &&
      (typeof provider.type !== 'string' || typeof provider.voice_id !== 'string')
    ) {
      throw validation('script.provider', "'provider' needs 'type' and 'voice_id'");
    }
  } else {
    throw validation('script.type', "'type' must be one of: text, audio");
  }
  return { source_url: source, script: s };
}

export async function startFakeDid(options: FakeDidOptions = {}): Promise<FakeDid> {
  const apiKey = options.apiKey ?? randomBytes(18).toString('base64url');
  const ffmpeg = options.ffmpeg ?? 'ffmpeg';
  const ffprobe = options.ffprobe ?? 'ffprobe';
  const switches: FakeDidSwitches = { ...defaultSwitches, ...options.switches };
  const dir = await mkdtemp(join(tmpdir(), 'fake-d-id-'));
  const stopping = new AbortController();
  const images = new Map<string, Upload>();
  const audios = new Map<string, Upload>();
  const talks = new Map<string, Talk>();
  const requests: FakeDidRequest[] = [];
  const talkBodies: unknown[] = [];
  let base = '';

  const duration = async (path: string) =>
    Number(
      (
        await run(
          ffprobe,
          ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', path],
          stopping.signal,
        )
      ).trim(),
    );

  /** The upload an `s3://` URL this server handed out names, or undefined. */
  const lookup = (store: Map<string, Upload>, bucket: string, url: unknown) => {
    const match = typeof url === 'string' ? /^s3:\/\/([^/]+)\/fake-user\/([^/]+)\//.exec(url) : null;
    return match?.[1] === bucket && match[2] ? store.get(match[2]) : undefined;
  };

  async function render(talk: Talk): Promise<void> {
    const image = lookup(images, 'd-id-images-prod', talk.body.source_url);
    if (!image) {
      talk.failure = { kind: 'SourceError', description: 'Could not load source image or invalid format' };
      return;
    }
    const kind = image.bytes.subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47]))
      ? 'png'
      : image.bytes[0] === 0xff && image.bytes[1] === 0xd8
        ? 'jpg'
        : undefined;
    if (!kind) {
      talk.failure = { kind: 'SourceError', description: 'Could not load source image or invalid format' };
      return;
    }
    const imagePath = join(dir, `${talk.id}-source.${kind}`);
    await writeFile(imagePath, image.bytes);
    let soundInput: string[];
    let seconds: number;
    if (talk.body.script.type === 'audio') {
      const audio = lookup(audios, 'd-id-audios-prod', talk.body.script.audio_url);
      if (!audio) {
        talk.failure = { kind: 'UnknownError', description: 'Could not load audio_url' };
        return;
      }
      const audioPath = join(dir, `${talk.id}-audio`);
      await writeFile(audioPath, audio.bytes);
      soundInput = ['-i', audioPath];
      seconds = await duration(audioPath);
    } else {
      soundInput = ['-f', 'lavfi', '-i', 'sine=frequency=220:sample_rate=16000'];
      seconds = switches.textSeconds;
    }
    const path = join(dir, `${talk.id}.mp4`);
    const args = ['-nostdin', '-v', 'error', '-y', '-loop', '1', '-framerate', '25', '-i', imagePath];
    args.push(...soundInput, '-t', String(seconds), '-map', '0:v', '-map', '1:a');
    args.push('-vf', 'scale=trunc(iw/2)*2:trunc(ih/2)*2,format=yuv420p', '-r', '25');
    args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac', '-movflags', '+faststart', path);
    await run(ffmpeg, args, stopping.signal);
    talk.video = { path, duration: await duration(path) };
  }

  async function upload(req: IncomingMessage, field: 'image' | 'audio'): Promise<[number, unknown]> {
    const body = await readBody(req, 50 * 1024 * 1024);
    let form: FormData;
    try {
      form = await new Response(body, {
        headers: { 'content-type': req.headers['content-type'] ?? '' },
      }).formData();
    } catch {
      throw validation(field, 'multipart/form-data body expected');
    }
    const part = form.get(field);
    if (!(part instanceof Blob) || part.size === 0) throw validation(field, `'${field}' is required`);
    const id = newId('');
    const filename = ((part as File).name || field).replace(/[^a-zA-Z0-9._-]/g, '').slice(0, 50) || field;
    const stored = { bytes: Buffer.from(await part.arrayBuffer()), filename };
    if (field === 'image') {
      images.set(id, stored);
      return [201, { id, url: `s3://d-id-images-prod/fake-user/${id}/${filename}` }];
    }
    const path = join(dir, `upload-${id}`);
    await writeFile(path, stored.bytes);
    const seconds = await duration(path).catch(() => NaN);
    if (!Number.isFinite(seconds)) throw validation('audio', 'audio could not be decoded');
    audios.set(id, stored);
    return [201, { id, url: `s3://d-id-audios-prod/fake-user/${id}/${filename}`, duration: seconds }];
  }

  async function createTalk(req: IncomingMessage): Promise<[number, unknown]> {
    const raw = await readBody(req, 1024 * 1024);
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch {
      throw validation('', 'body must be JSON');
    }
    talkBodies.push(parsed);
    if (switches.validationError) throw validation('script', "'script' is required");
    const talk: Talk = {
      id: newId('tlk_'),
      createdAt: new Date().toISOString(),
      body: checkTalkBody(parsed),
      signature: randomBytes(12).toString('hex'),
      polls: 0,
    };
    talks.set(talk.id, talk);
    render(talk).catch(() => {
      talk.failure ??= { kind: 'UnknownError', description: 'Unknown internal error' };
    });
    return [
      201,
      { id: talk.id, object: 'talk', created_at: talk.createdAt, created_by: 'fake-user', status: 'created' },
    ];
  }

  async function getTalk(id: string): Promise<[number, unknown]> {
    const talk = talks.get(id);
    if (!talk) throw new HttpError(404, 'NotFoundError', 'talk not found');
    if (switches.pollDelayMs > 0) await delay(switches.pollDelayMs, undefined, { signal: stopping.signal });
    talk.polls += 1;
    const common = { id, object: 'talk', created_at: talk.createdAt, source_url: talk.body.source_url };
    const ending = talk.polls > switches.createdPolls + switches.startedPolls;
    if (talk.polls <= switches.createdPolls) return [200, { ...common, status: 'created' }];
    if (!ending || switches.outcome === 'never') return [200, { ...common, status: 'started' }];
    if (switches.outcome === 'rejected') {
      const error = { kind: 'ModerationError', description: 'the source image was rejected by moderation' };
      return [200, { ...common, status: 'rejected', error }];
    }
    if (switches.outcome === 'error' || talk.failure) {
      const error = talk.failure ?? { kind: 'FaceError', description: 'No valid face detected' };
      return [200, { ...common, status: 'error', error: { ...error, details: {} } }];
    }
    if (!talk.video) return [200, { ...common, status: 'started' }];
    const expires = Math.floor(Date.now() / 1000) + 3600;
    const query = `AWSAccessKeyId=FAKEKEY&Expires=${expires}&Signature=${talk.signature}`;
    return [
      200,
      {
        ...common,
        status: 'done',
        result_url: `${base}/results/${id}.mp4?${query}`,
        duration: talk.video.duration,
        config: { result_format: '.mp4', stitch: true },
      },
    ];
  }

  /** The pre-signed result: no Basic auth (like S3), the signature decides. */
  async function result(res: ServerResponse, id: string, url: URL, record: FakeDidRequest): Promise<void> {
    const talk = talks.get(id);
    if (!talk?.video || url.searchParams.get('Signature') !== talk.signature) {
      record.status = 403;
      res
        .writeHead(403, { 'content-type': 'application/xml' })
        .end('<Error><Code>AccessDenied</Code></Error>');
      return;
    }
    const bytes = await readFile(talk.video.path);
    record.status = 200;
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': bytes.length }).end(bytes);
  }

  function fault(method: string, path: string): HttpError | undefined {
    if (!`${method} ${path}`.startsWith(switches.faultsOn)) return undefined;
    if (switches.rateLimited > 0) {
      switches.rateLimited -= 1;
      return new HttpError(429, 'TooManyRequestsError', 'Too Many Requests');
    }
    if (switches.serverErrors > 0) {
      switches.serverErrors -= 1;
      return new HttpError(500, 'InternalServerError', 'Internal Server Error');
    }
    return undefined;
  }

  async function route(req: IncomingMessage, res: ServerResponse, record: FakeDidRequest, url: URL) {
    const { method = 'GET' } = req;
    const path = url.pathname;
    const resultMatch = /^\/results\/([^/]+)\.mp4$/.exec(path);
    if (method === 'GET' && resultMatch?.[1]) return result(res, resultMatch[1], url, record);
    if (switches.unauthorized || record.auth !== 'ok') {
      throw new HttpError(401, 'AuthorizationError', 'Unauthorized');
    }
    const injected = fault(method, path);
    if (injected) throw injected;
    const talkMatch = /^\/talks\/([^/]+)$/.exec(path);
    let answer: [number, unknown];
    if (method === 'POST' && path === '/images') answer = await upload(req, 'image');
    else if (method === 'POST' && path === '/audios') answer = await upload(req, 'audio');
    else if (method === 'POST' && path === '/talks') answer = await createTalk(req);
    else if (method === 'GET' && talkMatch?.[1]) answer = await getTalk(decodeURIComponent(talkMatch[1]));
    else throw new HttpError(404, 'NotFoundError', 'not found');
    record.status = answer[0];
    res.writeHead(answer[0], { 'content-type': 'application/json' }).end(JSON.stringify(answer[1]));
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const header = req.headers.authorization;
    const record: FakeDidRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      auth: header === undefined ? 'missing' : header === `Basic ${apiKey}` ? 'ok' : 'wrong',
      status: 0,
    };
    requests.push(record);
    route(req, res, record, url).catch((error: unknown) => {
      if (res.headersSent || res.destroyed) return;
      const failure =
        error instanceof HttpError
          ? error
          : new HttpError(500, 'InternalServerError', 'Internal Server Error');
      record.status = failure.status;
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (failure.status === 429) headers['retry-after'] = String(switches.retryAfterSeconds);
      const body = { kind: failure.kind, description: failure.message, details: failure.details };
      res.writeHead(failure.status, headers).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: base,
    apiKey,
    requests,
    talkBodies,
    switches,
    set(changes) {
      Object.assign(switches, changes);
    },
    async close() {
      stopping.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
