// A TCP proxy on loopback to put in the path from a gateway to a worker, whose behaviour a test
// switches while calls run through it: pass bytes through, delay them, reset the connections, or
// hold everything as a dead network path (a black hole) does.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { once } from 'node:events';

export type FaultMode =
  | { kind: 'pass' }
  /** Every chunk waits `ms` before it is forwarded, in each direction (order kept). */
  | { kind: 'latency'; ms: number }
  /** Open connections are reset (RST) at once, and so is every new one. */
  | { kind: 'reset' }
  /**
   * Connections are accepted and read, but nothing is forwarded or answered; open ones stall too.
   * What was held goes through once the mode changes, as TCP's retransmissions do when a path
   * comes back, so a connection that outlives the black hole is intact.
   */
  | { kind: 'blackhole' };

export interface FaultProxy {
  /** `127.0.0.1:<port>`, to give a gateway as the worker's address. */
  readonly address: string;
  readonly mode: FaultMode;
  /** Connections accepted so far. */
  readonly accepted: number;
  set(mode: FaultMode): void;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
}

/** Resets a socket (RST rather than FIN), as a crashed peer or a middlebox dropping state would. */
function reset(socket: Socket) {
  if (socket.destroyed) return;
  // libuv will not reset a socket whose sending side is already shut down, and Node then never
  // closes its handle, so the process spins at exit: such a socket is only destroyed.
  if (socket.connecting || socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}

/**
 * Starts a proxy to `target` (`host:port`). Each chunk is forwarded or not according to the mode
 * when it arrives; a delayed chunk still goes out even if the mode changed while it waited.
 */
export async function startFaultProxy(
  target: string,
  initial: FaultMode = { kind: 'pass' },
): Promise<FaultProxy> {
  const [host, port] = [
    target.slice(0, target.lastIndexOf(':')),
    Number(target.slice(target.lastIndexOf(':') + 1)),
  ];
  let mode = initial;
  let accepted = 0;
  /** Resolves when the current black hole ends (a resolved promise outside one). */
  let pathBack = Promise.resolve();
  let endBlackHole = () => undefined as void;
  const pairs = new Set<Pair>();

  /** Forwards `from` → `to` under the current mode; a chunk is never reordered behind a later one. */
  const pipe = (from: Socket, to: Socket) => {
    let queue = Promise.resolve();
    from.on('data', (chunk: Buffer) => {
      const now = mode;
      if (now.kind === 'reset') return;
      if (now.kind === 'blackhole') {
        const back = pathBack;
        queue = queue.then(() => back).then(() => void (to.destroyed || to.write(chunk)));
        return;
      }
      if (now.kind === 'pass') {
        queue = queue.then(() => void (to.destroyed || to.write(chunk)));
        return;
      }
      const due = Date.now() + now.ms;
      queue = queue.then(async () => {
        const wait = due - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (!to.destroyed) to.write(chunk);
      });
    });
    from.on('end', () => void queue.then(() => to.end()));
  };

  const resetAll = () => {
    for (const { client, upstream } of pairs) {
      reset(client);
      reset(upstream);
    }
  };

  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    accepted++;
    if (mode.kind === 'reset') {
      client.on('error', () => undefined);
      reset(client);
      return;
    }
    const upstream = connect({ host, port, allowHalfOpen: true });
    const pair = { client, upstream };
    pairs.add(pair);
    const close = () => {
      pairs.delete(pair);
      reset(client);
      reset(upstream);
    };
    // A reset on one side is passed on as a reset on the other.
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    pipe(client, upstream);
    pipe(upstream, client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port: own } = server.address() as { port: number };

  return {
    address: `127.0.0.1:${own}`,
    get mode() {
      return mode;
    },
    get accepted() {
      return accepted;
    },
    set(next) {
      if (next.kind === 'blackhole' && mode.kind !== 'blackhole')
        pathBack = new Promise((resolve) => (endBlackHole = resolve));
      if (next.kind !== 'blackhole') endBlackHole();
      mode = next;
      if (next.kind === 'reset') resetAll();
    },
    async close() {
      endBlackHole();
      resetAll();
      pairs.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
