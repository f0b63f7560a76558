import type { ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { ManagedProcess } from '@switchboard/devcluster';

/** Characters of output a TestProcess keeps for output(): enough for a failed start-up's end. */
const OUTPUT_LIMIT = 20_000;

export interface SpawnOptions {
  /** The child's whole environment: nothing is inherited from the test process. */
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** `pipe` gives the child a stdin (`child.stdin`); by default it reads nothing. */
  stdin?: 'ignore' | 'pipe';
  /** Characters of output kept for output() and stderr() (default 20 000). */
  outputLimit?: number;
}

/** A process a test started: the child, its recent output, its exit, and a way to stop it. */
export interface TestProcess {
  readonly child: ChildProcess;
  /** Its recent stdout and stderr lines, interleaved as they came. */
  readonly output: () => string;
  /** Its recent stderr lines only. */
  readonly stderr: () => string;
  /** Resolves with the exit code and signal once it has exited (whenever that was). */
  readonly exited: Promise<[number | null, NodeJS.Signals | null]>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it is gone. */
  readonly stop: (graceMs?: number) => Promise<void>;
}

/**
 * Every process the test harness starts goes through here: devcluster's ManagedProcess, so it
 * dies with the test process even when that is killed (setpriv's parent-death signal and the
 * reaper), its pipes are always drained, and a last output line without a newline is kept. The
 * child keeps the event loop alive while it runs, as a test awaiting its exit needs.
 */
export function spawnProcess(
  name: string,
  command: string,
  args: string[],
  options: SpawnOptions,
): TestProcess {
  let output = '';
  let stderr = '';
  const limit = options.outputLimit ?? OUTPUT_LIMIT;
  const keep = (text: string, line: string) => {
    const kept = text + line + '\n';
    return kept.length > limit ? kept.slice(-limit) : kept;
  };
  const proc = new ManagedProcess(name, command, args, undefined, {
    env: options.env,
    cwd: options.cwd,
    stdin: options.stdin,
    keepAlive: true,
    onLine: (line, stream) => {
      output = keep(output, line);
      if (stream === 'stderr') stderr = keep(stderr, line);
    },
  });
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    proc.child.once('exit', (code, signal) => {
      // What is still in the pipes is read by 'close', unless a grandchild holds them open.
      const done = () => {
        clearTimeout(timer);
        resolve([code, signal]);
      };
      const timer = setTimeout(done, 500);
      proc.child.once('close', done);
    }),
  );
  return {
    child: proc.child,
    output: () => output,
    stderr: () => stderr,
    exited,
    stop: (graceMs = 5000) => proc.stop(graceMs),
  };
}

/** A Node script (e.g. a service's `dist/main.js`) run by this Node, through spawnProcess. */
export const spawnNode = (name: string, script: string, options: SpawnOptions): TestProcess =>
  spawnProcess(name, process.execPath, [script], options);

/** Fields of /proc/<pid>/stat after the command name (which may itself contain spaces and parens). */
function statFields(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null; // exited while we looked
  }
}

/** Every live process whose parent chain leads to `ancestor` (not `ancestor` itself). */
export function descendants(ancestor: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields) parents.set(Number(entry), Number(fields[1]));
  }
  const found: number[] = [];
  for (const [pid] of parents) {
    for (let p = parents.get(pid); p !== undefined && p > 1; p = parents.get(p)) {
      if (p === ancestor) {
        found.push(pid);
        break;
      }
    }
  }
  return found;
}

/** Running, that is: not gone and not a zombie waiting for init to reap it. */
export function isRunning(pid: number): boolean {
  const fields = statFields(pid);
  return fields !== null && fields[0] !== 'Z';
}

/** Running descendants of `ancestor` whose command name is `name` (e.g. a worker's ffmpegs). */
export function descendantsNamed(ancestor: number, name: string): number[] {
  return descendants(ancestor).filter((pid) => {
    try {
      return isRunning(pid) && readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name;
    } catch {
      return false;
    }
  });
}

/** Peak resident memory of a process so far (VmHWM), in bytes. */
export function peakRss(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmHWM for process ${pid}`);
  return Number(match[1]) * 1024;
}

/**
 * Runs a command-line tool (ffmpeg, ffprobe, espeak-ng…) to its end, as a ManagedProcess too:
 * resolves with its output, or rejects quoting its stderr unless it exits 0.
 */
export { runTool } from '@switchboard/devcluster';
