import { readFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';

/**
 * Where freePort() looks: below the kernel's ephemeral range (Linux: 32768–60999 unless
 * configured), from which every outgoing connection takes its local port. A port found free
 * inside that range can be taken by any connection the machine opens before the process it was
 * found for binds it (seconds, for a worker loading models); below it, only by another listener.
 */
const FREE_PORT_FLOOR = 20_000;

/** The first port of the ephemeral range, or undefined where the kernel does not say (not Linux). */
function ephemeralStart(): number | undefined {
  try {
    const first = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    return Number.isInteger(first) ? first : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a listener can bind host:port now (it is closed again at once). */
function bindable(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** A port the kernel picks (port 0), inside its ephemeral range. */
function kernelPort(host: string): Promise<number> {
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

/**
 * A TCP port that was free a moment ago on `host`: a random one between 20000 and the start of
 * the kernel's ephemeral range that could be bound, so parallel test files rarely guess the same
 * one and outgoing connections never take it; the kernel's pick where that range is too small or
 * unknown. A tiny race remains until the caller binds it, which the process starters below absorb
 * by retrying.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const ceiling = ephemeralStart();
  if (ceiling !== undefined && ceiling - FREE_PORT_FLOOR >= 1_000) {
    for (let guess = 0; guess < 20; guess++) {
      const port = FREE_PORT_FLOOR + Math.floor(Math.random() * (ceiling - FREE_PORT_FLOOR));
      if (await bindable(port, host)) return port;
    }
  }
  return kernelPort(host);
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
