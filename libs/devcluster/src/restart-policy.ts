/**
 * What the kubelet does when a container exits on its own (restartPolicy: Always): start it again
 * after a back-off of 10 s, doubling on each further exit up to 5 min (CrashLoopBackOff), and
 * forget the back-off once a start has run 10 min without exiting.
 */
export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  /** A start that ran this long before exiting counts as healthy: the next delay is the initial one. */
  resetAfterMs?: number;
  now?: () => number;
}

export class CrashLoopBackoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly resetAfterMs: number;
  private readonly now: () => number;
  /** The delay given last; 0 before the first exit or after a reset. */
  private delayMs = 0;
  private startedAt: number;
  /** Restarts so far, as `kubectl get pods` counts them (never reset). */
  restarts = 0;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 10_000;
    this.maxMs = options.maxMs ?? 300_000;
    this.resetAfterMs = options.resetAfterMs ?? 600_000;
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
  }

  /** A new start is under way (successful or not, its run time is measured from here). */
  started(): void {
    this.startedAt = this.now();
  }

  /** The process exited: how long to wait before starting it again. */
  next(): number {
    if (this.now() - this.startedAt >= this.resetAfterMs) this.delayMs = 0;
    this.delayMs = this.delayMs === 0 ? this.initialMs : Math.min(this.delayMs * 2, this.maxMs);
    this.restarts += 1;
    return this.delayMs;
  }
}

/** setTimeout and clearTimeout, replaceable so a test can run the back-off without waiting. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface HealerOptions extends BackoffOptions {
  /** Says what the healer does: `llm-2 exited (signal SIGKILL); restarting in 10 s (restart 1)`. */
  say: (message: string) => void;
  timers?: Timers;
}

/** What a restart gives back: the new process, checked once more after the start succeeded. */
export interface Restarted {
  readonly running: boolean;
}

/**
 * Restarts processes that exit on their own, each under its own name with its own back-off. A
 * restart that fails (the process exits or never gets ready) counts as another exit.
 */
export class Healer {
  private readonly backoffs = new Map<string, CrashLoopBackoff>();
  private readonly healing = new Map<string, Promise<void>>();
  private readonly waits = new Set<() => void>();
  private readonly timers: Timers;
  private closed = false;

  constructor(private readonly options: HealerOptions) {
    this.timers = options.timers ?? realTimers;
  }

  /**
   * `name` exited (`how`: `exited (signal SIGKILL)`): after its back-off, `restart` it unless
   * `wanted` says it should no longer run (stopped or removed on purpose meanwhile). Exits seen
   * while it is already being restarted are that restart's business.
   */
  crashed(name: string, how: string, restart: () => Promise<Restarted>, wanted: () => boolean): void {
    if (this.closed || this.healing.has(name)) return;
    const healing = this.heal(name, how, restart, wanted).finally(() => this.healing.delete(name));
    this.healing.set(name, healing);
  }

  /** Whether `name` is waiting out its back-off or starting again. */
  isHealing(name: string): boolean {
    return this.healing.has(name);
  }

  /** No more restarts: pending back-offs end now; resolves once restarts under way have settled. */
  async close(): Promise<void> {
    this.closed = true;
    for (const cancel of [...this.waits]) cancel();
    await Promise.allSettled([...this.healing.values()]);
  }

  private async heal(
    name: string,
    how: string,
    restart: () => Promise<Restarted>,
    wanted: () => boolean,
  ): Promise<void> {
    let backoff = this.backoffs.get(name);
    if (backoff === undefined) {
      backoff = new CrashLoopBackoff(this.options);
      this.backoffs.set(name, backoff);
    }
    let reason = how;
    for (;;) {
      const delay = backoff.next();
      this.options.say(`${name} ${reason}; restarting in ${seconds(delay)} (restart ${backoff.restarts})`);
      if (!(await this.wait(delay)) || !wanted()) return;
      backoff.started();
      try {
        const started = await restart();
        if (started.running) {
          this.options.say(`${name} restarted`);
          return;
        }
        reason = 'exited as soon as it had restarted';
      } catch (error) {
        if (this.closed || !wanted()) return;
        reason = `failed to restart (${firstLine(error)})`;
      }
    }
  }

  /** Resolves true after `ms`, or false at once if the healer closes first. */
  private wait(ms: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const cancel = () => {
        this.timers.clearTimeout(handle);
        this.waits.delete(cancel);
        resolve(false);
      };
      const handle = this.timers.setTimeout(() => {
        this.waits.delete(cancel);
        resolve(!this.closed);
      }, ms);
      this.waits.add(cancel);
    });
  }
}

/** How a process ended, as the log says it: `exited (signal SIGKILL)`, `exited (code 1)`. */
export function exitDescription(child: {
  exitCode: number | null;
  signalCode: NodeJS.Signals | null;
}): string {
  if (child.signalCode !== null) return `exited (signal ${child.signalCode})`;
  return `exited (code ${child.exitCode ?? 'unknown'})`;
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
