import { createServer, connect } from 'node:net';

/**
 * A TCP port that was free a moment ago on 127.0.0.1. The kernel picks it (port 0), so parallel
 * test files do not collide the way a fixed or random-guess port would; a tiny race remains until
 * the caller binds it, which the process starters below absorb by retrying.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not read the allocated port'));
      });
    });
  });
}

/** How many fresh ports a process starter tries before it gives up. */
const START_ATTEMPTS = 3;

/**
 * Starts something on a port freePort() found, and on a fresh one when that start fails: another
 * process may take the port between the check and the bind. Fails with the last start's error.
 */
export async function startOnFreePort<T>(
  host: string,
  start: (port: number) => Promise<T>,
): Promise<{ port: number; started: T }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort(host);
    try {
      return { port, started: await start(port) };
    } catch (error) {
      if (attempt >= START_ATTEMPTS) throw error;
    }
  }
}

/** Whether something accepts TCP connections on host:port right now. */
export function canConnect(port: number, host = '127.0.0.1', timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Sends `request` (if any) and resolves with what the server wrote first, or null on error/timeout.
 * Used to tell "a socket is open" apart from "the server speaks its protocol" (NATS INFO, Redis PONG).
 */
export function firstBytes(
  port: number,
  request: string | null,
  host = '127.0.0.1',
  timeoutMs = 1000,
): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    let settled = false;
    const done = (value: string | null): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(timeoutMs, () => done(null));
    socket.once('connect', () => {
      if (request !== null) socket.write(request);
    });
    socket.once('data', (chunk: Buffer) => done(chunk.toString('utf8')));
    socket.once('error', () => done(null));
    socket.once('close', () => done(null));
  });
}
