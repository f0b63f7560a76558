// A full garbage collection in another Node process, through its inspector, so that its resident
// memory can be compared over time: without it, RSS also counts garbage not yet collected and a
// young generation V8 grew for a burst of allocation, which differ from one moment to the next by
// more than a leak check's margin. The process must run with `gcReachableEnv` (NODE_OPTIONS
// `--inspect-port=0`): SIGUSR1 then opens its inspector on a free loopback port instead of 9229,
// which another process may hold. Nothing listens before the first collection.
import WebSocket from 'ws';
import { sleep } from './stack.js';

/** Environment for a process whose heap a test collects with collectGarbage(). */
export const gcReachableEnv = { NODE_OPTIONS: '--inspect-port=0' } as const;

/** The inspector's address of each process once opened, by pid (it prints it only once). */
const inspectors = new Map<number, string>();

/** Opens the inspector of `pid` (once) and returns its WebSocket address, read from its stderr. */
async function inspectorOf(pid: number, output: () => string): Promise<string> {
  const known = inspectors.get(pid);
  if (known) return known;
  // A restarted process keeps its predecessor's output: the address is the last one printed,
  // and new (each inspector has an id of its own).
  const lastAddress = () => [...output().matchAll(/Debugger listening on (ws:\/\/\S+)/g)].at(-1)?.[1];
  const previous = lastAddress();
  process.kill(pid, 'SIGUSR1');
  const deadline = Date.now() + 10_000;
  for (;;) {
    const address = lastAddress();
    if (address && address !== previous) {
      inspectors.set(pid, address);
      return address;
    }
    if (Date.now() > deadline) throw new Error(`process ${pid} opened no inspector on SIGUSR1`);
    await sleep(50);
  }
}

/**
 * Collects all garbage in the Node process `pid` (V8's low-memory collection, which also gives
 * back the pages it frees) and resolves once it is done.
 */
export async function collectGarbage(pid: number, output: () => string): Promise<void> {
  const socket = new WebSocket(await inspectorOf(pid, output));
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () =>
        socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' })),
      );
      socket.on('message', (data: Buffer) => {
        const reply = JSON.parse(data.toString('utf8')) as { id?: number; error?: { message: string } };
        if (reply.id !== 1) return;
        if (reply.error) reject(new Error(`collectGarbage in ${pid}: ${reply.error.message}`));
        else resolve();
      });
      socket.once('error', reject);
    });
  } finally {
    socket.close();
  }
}
