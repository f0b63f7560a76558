import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Socket } from 'node:net';
import { track } from './reaper.js';

/** Finds an executable on PATH, then in the given fallback folders (Debian puts nats-server in /usr/sbin). */
export function findExecutable(
  name: string,
  fallbackDirs: string[] = ['/usr/sbin', '/usr/bin', '/usr/local/bin'],
): string {
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter).filter(Boolean), ...fallbackDirs];
  for (const dir of dirs) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  throw new Error(`${name} not found on PATH or in ${fallbackDirs.join(', ')}`);
}

let setprivPath: string | null | undefined;

/** setpriv (util-linux) lets the kernel kill the child if we die without running any handler. */
function setpriv(): string | null {
  if (setprivPath === undefined) {
    try {
      setprivPath = process.platform === 'linux' ? findExecutable('setpriv') : null;
    } catch {
      setprivPath = null;
    }
  }
  return setprivPath;
}

const OUTPUT_LINES_KEPT = 50;

export interface ProcessOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Sees every whole line of output (the local runner relays them to its terminal), and its stream. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /** `pipe` gives the child a stdin to write to (`child.stdin`); by default it reads nothing. */
  stdin?: 'ignore' | 'pipe';
  /**
   * Keep this process's event loop alive while the child runs (by default the child is unref'd,
   * so a forgotten stop() cannot keep a test process alive): for a caller that awaits the child's
   * own `exit` event with nothing else pending.
   */
  keepAlive?: boolean;
  /** Run as this user and group (a server that refuses root, started by root). */
  uid?: number;
  gid?: number;
}

/** A server process we started: its recent output (for error messages) and ways to stop it. */
export class ManagedProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  private readonly output: string[] = [];
  /** Whether `readyLine` has appeared in the output (kept apart from the bounded tail). */
  private sawReadyLine = false;

  constructor(
    readonly name: string,
    command: string,
    args: string[],
    /** A line the server logs once it serves; proves that *this* process bound the port. */
    private readonly readyLine?: string,
    private readonly options: ProcessOptions = {},
  ) {
    const wrapper = setpriv();
    const [file, argv] = wrapper
      ? [wrapper, ['--pdeathsig', 'SIGKILL', '--', command, ...args]]
      : [command, args];
    this.child = spawn(file, argv, {
      detached: false,
      stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
      env: options.env,
      cwd: options.cwd,
      uid: options.uid,
      gid: options.gid,
    });
    track(this.child);
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    for (const [stream, from] of [
      [this.child.stdout, 'stdout'],
      [this.child.stderr, 'stderr'],
    ] as const) {
      // Always drain the pipes (a full pipe would block the server) and keep the tail for diagnostics.
      stream?.setEncoding('utf8');
      let partial = '';
      stream?.on('data', (chunk: string) => {
        // Chunks end anywhere; only whole lines are matched and kept.
        const lines = (partial + chunk).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) this.remember(line, from);
      });
      // The last line may lack its newline.
      stream?.on('end', () => {
        if (partial !== '') this.remember(partial, from);
        partial = '';
      });
      if (!options.keepAlive) (stream as unknown as Socket | null)?.unref();
    }
    // A forgotten stop() must not keep a test process alive; the reaper kills the child on exit.
    if (!options.keepAlive) this.child.unref();
    this.child.once('error', (error) => this.remember(`spawn error: ${error.message}`, 'stderr'));
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get loggedReady(): boolean {
    return this.sawReadyLine;
  }

  recentOutput(): string {
    return this.output.join('\n');
  }

  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. Resolves once it is gone. */
  async stop(graceMs = 3000): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGCONT'); // a paused process cannot act on SIGTERM
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.waitExit(graceMs + 5000);
    clearTimeout(timer);
  }

  /** Immediate SIGKILL: the "server crashed" case. Resolves once it is gone. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGKILL');
    await this.waitExit(5000);
  }

  /** SIGSTOP: the server keeps its sockets open but answers nothing (the "hung server" case). */
  pause(): void {
    if (this.running) this.child.kill('SIGSTOP');
  }

  resume(): void {
    if (this.running) this.child.kill('SIGCONT');
  }

  /**
   * The child is unref'd, so awaiting `exited` alone would let the event loop run dry and end the
   * process mid-await; the timer keeps it alive and bounds the wait.
   */
  private async waitExit(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${this.name} (pid ${this.pid}) did not exit within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private remember(line: string, stream: 'stdout' | 'stderr'): void {
    this.options.onLine?.(line, stream);
    if (this.readyLine !== undefined && line.includes(this.readyLine)) this.sawReadyLine = true;
    if (line.trim() === '') return;
    this.output.push(line);
    if (this.output.length > OUTPUT_LINES_KEPT) this.output.shift();
  }
}

/**
 * Polls `probe` until it returns true; fails early if the process exits (a taken port, a bad flag),
 * quoting its output so the failure explains itself.
 */
export async function waitUntilReady(
  proc: ManagedProcess,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!proc.running) {
      throw new Error(`${proc.name} exited during start-up:\n${proc.recentOutput()}`);
    }
    if (await probe()) return;
    if (Date.now() > deadline) {
      await proc.kill();
      throw new Error(`${proc.name} did not become ready within ${timeoutMs} ms:\n${proc.recentOutput()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
