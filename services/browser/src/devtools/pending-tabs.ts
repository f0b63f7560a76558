import type { RawData } from 'ws';
import type { TabReserver } from '../chromium/browser-targets.js';
import type { CdpCommand } from './cdp-policy.js';

/**
 * One DevTools connection's `Target.createTarget` calls still waiting for Chromium's answer. Each
 * holds a place among the session's tabs (BROWSER_MAX_TABS) from before it is forwarded until it
 * is answered, so a client sending many at once, on one socket or several, gets no more tabs
 * than the bound.
 */
export class PendingTabs {
  private readonly pending = new Map<string, (createdTargetId?: string) => void>();

  constructor(private readonly tabs: TabReserver) {}

  /** Why this create is refused (the session is at its bound), or null once its place is held. */
  reserve(command: CdpCommand): string | null {
    const release = this.tabs.reserveTab();
    if (release === null) {
      return `the session has ${this.tabs.maxTabs} tabs open, the most it may have; close one before opening another`;
    }
    this.pending.set(keyOf(command.id, command.sessionId), release);
    return null;
  }

  /**
   * Reads a browser message for the answer to a pending create. Only while one is pending:
   * otherwise the relay passes browser messages on without parsing them.
   */
  observe(data: RawData): void {
    if (this.pending.size === 0) return;
    let message: { id?: unknown; sessionId?: unknown; result?: { targetId?: unknown } };
    try {
      message = JSON.parse(text(data)) as typeof message;
    } catch {
      return;
    }
    if (typeof message.id !== 'number') return;
    const key = keyOf(message.id, typeof message.sessionId === 'string' ? message.sessionId : undefined);
    const release = this.pending.get(key);
    if (release === undefined) return;
    this.pending.delete(key);
    const targetId = message.result?.targetId;
    release(typeof targetId === 'string' ? targetId : undefined);
  }

  /** The connection ended: creates it was waiting for no longer hold places. */
  releaseAll(): void {
    for (const release of this.pending.values()) release();
    this.pending.clear();
  }
}

function keyOf(id: number, sessionId: string | undefined): string {
  return `${sessionId ?? ''}#${id}`;
}

function text(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
