// One way to run ffmpeg and ffprobe: arguments in, bytes out, the process gone when the caller's
// signal aborts, and ffmpeg's own words kept for the log (a job's error only says what failed).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { childProcessEnv } from '@switchboard/config';

/** The binaries; Debian's ffmpeg package provides both on PATH (ANIMATION_FFMPEG_PATH overrides). */
export interface FfmpegPaths {
  readonly ffmpeg: string;
  readonly ffprobe: string;
}

export const defaultFfmpegPaths: FfmpegPaths = { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' };

/** ffmpeg failed; `detail` is the head of its stderr (for the log, never for a client). */
export class FfmpegError extends Error {
  constructor(
    message: string,
    readonly detail: string,
  ) {
    super(message);
    this.name = 'FfmpegError';
  }
}

const STDERR_LIMIT = 4096;

export interface RunningProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** Resolves when it exits with 0; rejects with FfmpegError otherwise, or with the abort reason. */
  readonly done: Promise<void>;
}

/** Starts `binary args`; stdin/stdout are the caller's to use. */
export function startProcess(binary: string, args: readonly string[], signal?: AbortSignal): RunningProcess {
  signal?.throwIfAborted();
  // ffmpeg parses tenants' media: it gets the allow-listed environment, never the worker's
  // secrets (the avatar vendor's key, S3 and NATS credentials, the cluster secret).
  const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'], env: childProcessEnv() });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    if (stderr.length < STDERR_LIMIT) stderr += chunk.slice(0, STDERR_LIMIT - stderr.length);
  });
  // A reader that stops early (or an aborted job) closes the pipes; EPIPE is then expected.
  child.stdin.on('error', () => undefined);
  const onAbort = () => child.kill('SIGKILL');
  signal?.addEventListener('abort', onAbort, { once: true });
  const done = (async () => {
    try {
      const [code, killedBy] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
      signal?.throwIfAborted();
      if (code !== 0) {
        throw new FfmpegError(`${binary} exited with ${code ?? killedBy}`, stderr.trim());
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  })();
  // Callers await `done` later; an early failure must not surface as an unhandled rejection.
  done.catch(() => undefined);
  child.on('error', () => undefined);
  return { child, done };
}

/** Runs to the end and returns stdout whole (small outputs: ffprobe's JSON, one image). */
export async function runToBuffer(
  binary: string,
  args: readonly string[],
  signal?: AbortSignal,
  maxBytes = 256 * 1024 * 1024,
): Promise<Buffer> {
  const running = startProcess(binary, args, signal);
  running.child.stdin.end();
  const chunks: Buffer[] = [];
  let size = 0;
  running.child.stdout.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) running.child.kill('SIGKILL');
    else chunks.push(chunk);
  });
  await running.done;
  if (size > maxBytes) throw new FfmpegError(`${binary} output exceeds ${maxBytes} bytes`, '');
  return Buffer.concat(chunks);
}
