import { SwitchboardError } from '@switchboard/errors';
import type { Logger } from '@switchboard/telemetry';
import type { RelayedWebSocket } from '../http/websocket-ending.js';
import type { SessionRouter } from '../clients/session-router.js';
import type { LiveLink, LiveLinks } from './link-store.js';

/** Close codes the viewer page explains (the application's own range, RFC 6455 §7.4.2). */
export const CLOSE_LINK_REVOKED = 4001;
export const CLOSE_LINK_EXPIRED = 4002;
export const CLOSE_SESSION_ENDED = 4003;

/** Every viewer's link is looked at again this often: revoked, expired or ended within 2 s. */
const RECHECK_MS = 1_000;

interface OpenViewer {
  link: LiveLink;
  socket: RelayedWebSocket;
}

/**
 * The live viewers connected through this gateway replica. Each second every one's link is read
 * again from the shared bucket (a revocation made on any replica), its expiry and its session's
 * state in the registry; a viewer whose link no longer holds is closed with a code its page
 * explains.
 */
export class OpenViewers {
  private readonly viewers = new Set<OpenViewer>();
  /** Runs only while a viewer is connected, so a replica with none (or shut down) keeps no timer. */
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    private readonly links: () => LiveLinks | undefined,
    private readonly sessions: SessionRouter,
    private readonly logger: Logger,
  ) {}

  /** Follows `socket` until `closed` resolves (the client's socket closed). */
  add(link: LiveLink, socket: RelayedWebSocket, closed: Promise<unknown>): void {
    const viewer = { link, socket };
    this.viewers.add(viewer);
    this.timer ??= setInterval(() => void this.recheck(), RECHECK_MS).unref();
    void closed.finally(() => this.forget(viewer));
  }

  private forget(viewer: OpenViewer): void {
    this.viewers.delete(viewer);
    if (this.viewers.size > 0 || this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async recheck(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      await Promise.all([...this.viewers].map((viewer) => this.check(viewer)));
    } finally {
      this.checking = false;
    }
  }

  private async check(viewer: OpenViewer): Promise<void> {
    const { link } = viewer;
    const end = (code: number, reason: string) => {
      this.forget(viewer);
      viewer.socket.close(code, reason);
    };
    if (link.expires_at_ms <= Date.now()) return end(CLOSE_LINK_EXPIRED, 'link_expired');
    try {
      const store = this.links();
      if (store && !(await store.current(link.live_id))) return end(CLOSE_LINK_REVOKED, 'link_revoked');
      const route = await this.sessions.route(link.session_id, { keyId: link.owner_key_id });
      if (route.status !== 'active') return end(CLOSE_SESSION_ENDED, 'session_ended');
    } catch (error) {
      // The registry no longer knows the session: it ended long enough ago to be forgotten.
      if (error instanceof SwitchboardError && error.code === 'session_not_found')
        return end(CLOSE_SESSION_ENDED, 'session_ended');
      // The bucket or registry unreachable for a moment: the viewer stays until it answers again.
      this.logger.debug({ err: error, live_id: link.live_id }, 'live link recheck failed');
    }
  }
}
