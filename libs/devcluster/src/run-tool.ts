// Command-line tools (ffmpeg, ffprobe, …) run to their end as ManagedProcesses, so a tool still
// running when this process dies is killed with it rather than left behind.
import { ManagedProcess } from './process.js';

/**
 * Runs `command` with this process's environment; resolves with its output, or rejects quoting its
 * stderr unless it exits 0. `signal` kills it.
 */
export async function runTool(
  command: string,
  args: string[],
  options: { signal?: AbortSignal } = {},
): Promise<{ stdout: string; stderr: string }> {
  options.signal?.throwIfAborted();
  const lines = { stdout: [] as string[], stderr: [] as string[] };
  const proc = new ManagedProcess(command, command, args, undefined, {
    keepAlive: true,
    onLine: (line, stream) => lines[stream].push(line),
  });
  const abort = () => proc.child.kill('SIGKILL');
  options.signal?.addEventListener('abort', abort, { once: true });
  try {
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      proc.child.once('error', reject);
      proc.child.once('close', (c, s) => resolve([c, s]));
    });
    options.signal?.throwIfAborted();
    const text = (kept: string[]) => kept.map((line) => `${line}\n`).join('');
    if (code !== 0) {
      throw new Error(`${command} ${args.join(' ')} exited with ${code ?? signal}:\n${text(lines.stderr)}`);
    }
    return { stdout: text(lines.stdout), stderr: text(lines.stderr) };
  } finally {
    options.signal?.removeEventListener('abort', abort);
  }
}
