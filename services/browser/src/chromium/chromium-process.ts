import { type ChildProcess, spawn } from 'node:child_process';
import type { ChromiumUser } from './chromium-user.js';

export interface ChromiumProcess {
  readonly pid: number;
  /** ws://127.0.0.1:<port>/devtools/browser/<id> */
  readonly cdpUrl: string;
  /** Resolves when the browser process has exited, for any reason. */
  readonly exited: Promise<void>;
  readonly hasExited: boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

const LISTENING = /DevTools listening on (ws:\/\/\S+)/;
const STARTUP_TIMEOUT_MS = 20_000;

export interface LaunchOptions {
  /** Chromium's whole environment (chromium-env.ts); the worker's own is never passed on. */
  env: Record<string, string>;
  /** Whom it runs as; undefined: the worker's user. */
  user: ChromiumUser | undefined;
}

/** Starts Chromium and waits for its DevTools endpoint (printed on stderr). */
export async function launchChromium(
  executable: string,
  args: string[],
  options: LaunchOptions,
): Promise<ChromiumProcess> {
  const child = spawn(executable, args, {
    // fds 3 and 4 are the --remote-debugging-pipe: held open by us, closed by our death. Pipes
    // work across the uid switch: Chromium inherits the open descriptors, whoever owns them.
    stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
    env: options.env,
    // libuv also drops the worker's supplementary groups when it switches.
    ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
  });
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
    child.once('error', () => {
      exited = true;
      resolve();
    });
  });
  const cdpUrl = await readDevToolsUrl(child, exitedPromise);
  return {
    pid: child.pid!,
    cdpUrl,
    exited: exitedPromise,
    get hasExited() {
      return exited;
    },
    async stop(graceMs = 2_000) {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exitedPromise;
      clearTimeout(timer);
    },
  };
}

async function readDevToolsUrl(child: ChildProcess, exited: Promise<void>): Promise<string> {
  let stderr = '';
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<string>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        // Keep only the tail: Chromium may log a lot before it listens.
        stderr = (stderr + chunk.toString()).slice(-4096);
        const match = LISTENING.exec(stderr);
        if (match) resolve(match[1]!);
      });
      timer = setTimeout(
        () => reject(new Error('Chromium did not open its DevTools endpoint in time')),
        STARTUP_TIMEOUT_MS,
      );
      void exited.then(() =>
        reject(new Error(`Chromium exited at start-up: ${stderr.trim().split('\n').slice(-3).join(' | ')}`)),
      );
    });
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    clearTimeout(timer);
    // Stop buffering; keep draining so Chromium never blocks on a full stderr pipe.
    child.stderr!.removeAllListeners('data');
    child.stderr!.resume();
  }
}
