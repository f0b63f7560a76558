import { WebSocket, type RawData } from 'ws';
import type { Logger } from '@switchboard/telemetry';
import type { TabReserver } from '../chromium/browser-targets.js';
import type { AllowedHosts } from '@switchboard/address-guard';
import { judgeCommand, parseCommand, type CdpCommand } from './cdp-policy.js';
import { PendingTabs } from './pending-tabs.js';

/**
 * Largest message a client may send: scripts, DOM edits and intercepted response bodies fit in
 * it many times over; Chromium itself accepts far more, which is what made 256 MB possible.
 */
export const MAX_CLIENT_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Largest message relayed from the browser (full-page screenshots, DOM snapshots, bodies). */
export const MAX_BROWSER_MESSAGE_BYTES = 64 * 1024 * 1024;
/** Bytes queued for one slow side before that connection is dropped rather than the worker's memory. */
const MAX_QUEUED_BYTES = 64 * 1024 * 1024;
/** A client that does not answer a ping within this long is gone (a half-open TCP connection). */
export const HEARTBEAT_MS = 30_000;

const REFUSED = -32000;
const INVALID_REQUEST = -32600;
const PARSE_ERROR = -32700;

export interface BridgeOptions {
  allowed: AllowedHosts;
  /** The session's tab bound: each Target.createTarget takes a place first. */
  tabs: TabReserver;
  /** Called on every client message: DevTools traffic is session activity. */
  onActivity: () => void;
  log: Logger;
  heartbeatMs?: number;
}

/**
 * Joins one DevTools client to its session browser. Every client message is parsed and judged by
 * the policy; refused and malformed ones get a CDP error response and the connection stays open.
 * Whatever goes wrong with one connection (a reset, an oversized or invalid frame, a client that
 * stops reading or vanishes) closes that connection and its upstream, and nothing else.
 */
export function bridge(client: WebSocket, upstream: WebSocket, options: BridgeOptions): void {
  const { allowed, log } = options;
  const pendingTabs = new PendingTabs(options.tabs);
  let answeredPing = true;
  const closeBoth = () => {
    clearInterval(heartbeat);
    pendingTabs.releaseAll();
    client.terminate();
    upstream.terminate();
  };
  const heartbeat = setInterval(() => {
    if (!answeredPing) return closeBoth();
    answeredPing = false;
    client.ping();
  }, options.heartbeatMs ?? HEARTBEAT_MS);
  heartbeat.unref();
  client.on('pong', () => (answeredPing = true));

  const answer = (message: object) => {
    if (client.readyState === WebSocket.OPEN) client.send(JSON.stringify(message));
  };
  const refuse = (command: CdpCommand, reason: string) => {
    log.info({ method: command.method }, 'devtools command refused');
    answer({
      id: command.id,
      ...(command.sessionId === undefined ? {} : { sessionId: command.sessionId }),
      error: { code: REFUSED, message: `Refused by Switchboard: ${reason}` },
    });
  };
  client.on('message', (data: RawData) => {
    options.onActivity();
    const command = parseCommand(text(data));
    if ('invalid' in command) {
      const code = command.id === undefined ? PARSE_ERROR : INVALID_REQUEST;
      answer({ id: command.id, error: { code, message: `Refused by Switchboard: ${command.invalid}` } });
      return;
    }
    const verdict = judgeCommand(command, allowed);
    if ('refuse' in verdict) return refuse(command, verdict.refuse);
    if (upstream.readyState !== WebSocket.OPEN) return;
    if (command.method === 'Target.createTarget') {
      const overBound = pendingTabs.reserve(command);
      if (overBound !== null) return refuse(command, `${command.method}: ${overBound}`);
    }
    upstream.send(JSON.stringify(verdict.forward));
    if (upstream.bufferedAmount > MAX_QUEUED_BYTES) closeBoth();
  });
  upstream.on('message', (data: RawData, isBinary: boolean) => {
    pendingTabs.observe(data);
    if (client.readyState !== WebSocket.OPEN) return;
    client.send(data, { binary: isBinary });
    if (client.bufferedAmount > MAX_QUEUED_BYTES) {
      log.info({ queued: client.bufferedAmount }, 'devtools client not reading; connection dropped');
      closeBoth();
    }
  });
  client.once('close', closeBoth);
  upstream.once('close', closeBoth);
  // ws answers a bad or oversized frame itself (close 1007/1009) and then closes: let it.
  client.on('error', () => upstream.terminate());
  upstream.on('error', closeBoth);
}

function text(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
