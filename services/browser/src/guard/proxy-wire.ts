import {
  STATUS_CODES,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import type { Duplex } from 'node:stream';

/** The response header the session code reads to tell a guard refusal from the page's own answer. */
export const guardHeader = 'x-switchboard-guard';

export type GuardOutcome = 'blocked' | 'dns_failed' | 'connect_failed';

export interface Refusal {
  status: number;
  outcome: GuardOutcome | null;
  body: string;
}

export const refusals = {
  blocked: { status: 403, outcome: 'blocked', body: 'blocked by the address guard' },
  // The same verdict for the session; the body tells an operator which rule it was.
  portBlocked: { status: 403, outcome: 'blocked', body: 'port not allowed by the address guard' },
  dnsFailed: { status: 502, outcome: 'dns_failed', body: 'the host name does not resolve' },
  connectFailed: { status: 502, outcome: 'connect_failed', body: 'the host could not be reached' },
  notProxyRequest: {
    status: 400,
    outcome: null,
    body: 'this is a forward proxy: absolute-form requests only',
  },
} as const satisfies Record<string, Refusal>;

// RFC 9110 §7.6.1: these describe one connection, not the message, so they stop at the proxy.
const hopByHop = new Set([
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

/**
 * The end-to-end headers of a message: without hop-by-hop headers, without those the Connection
 * header names, and without any `Proxy-*` header (credentials or settings meant for this proxy).
 */
export function endToEndHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((token) => token.trim().toLowerCase()),
  );
  const kept: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || hopByHop.has(name) || named.has(name) || name.startsWith('proxy-')) continue;
    kept[name] = value;
  }
  return kept;
}

/** The headers of an Upgrade request as sent on: Connection and Upgrade stay, they are the point. */
export function upgradeRequestHead(method: string, path: string, host: string, rawHeaders: string[]): string {
  const lines = [`${method} ${path} HTTP/1.1`, `Host: ${host}`];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] ?? '';
    const lower = name.toLowerCase();
    if (lower === 'host' || lower === 'keep-alive' || lower.startsWith('proxy-')) continue;
    lines.push(`${name}: ${rawHeaders[i + 1] ?? ''}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}

export function refuseResponse(res: ServerResponse, refusal: Refusal): void {
  res.writeHead(refusal.status, refusalHeaders(refusal));
  res.end(refusal.body);
}

/** For CONNECT and Upgrade, where the socket is ours: a whole response, then the socket is done. */
export function refuseSocket(socket: Duplex, refusal: Refusal): void {
  if (socket.destroyed) return;
  const headers = Object.entries({ ...refusalHeaders(refusal), connection: 'close' })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const statusLine = `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}\r\n`;
  socket.end(`${statusLine}${headers}\r\n${refusal.body}`, () => socket.destroy());
}

function refusalHeaders(refusal: Refusal): Record<string, string> {
  return {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': String(Buffer.byteLength(refusal.body)),
    ...(refusal.outcome === null ? {} : { [guardHeader]: refusal.outcome }),
  };
}
