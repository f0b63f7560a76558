import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { SwitchboardError } from '@switchboard/errors';
import { CLUSTER_SECRET_KEY, clusterSecretMatches } from '@switchboard/grpc';
import type { Logger } from '@switchboard/telemetry';
import type { BrowserSession } from '../sessions/session.js';
import { LiveView, type LiveMode } from './live-view.js';
import { MAX_VIEWER_MESSAGE_BYTES } from './viewer-messages.js';
import { refuseUpgrade } from '../devtools/refuse-upgrade.js';

/** Set by the gateway once it has resolved a live-view link: whose session, and in which mode. */
export const LIVE_KEY_ID_HEADER = 'x-switchboard-key-id';
export const LIVE_MODE_HEADER = 'x-switchboard-live-mode';
const REQUEST_ID_HEADER = 'x-request-id';
const PATH = /^\/live\/([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})$/;

export interface LiveSessions {
  /** The caller's active session: 404 for a missing or someone else's, 410 for an ended one. */
  liveSession(sessionId: string, keyId: string): BrowserSession;
}

/** Takes an upgrade when it is a live view's (returns true), else leaves it to the DevTools relay. */
export type LiveUpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean;

/**
 * The worker's end of `GET /live/{token}/stream`: on the DevTools relay's port, behind the same
 * cluster secret, so only a gateway that has checked the link can open one. The gateway names the
 * session's owner and the link's mode; the viewer itself is never asked.
 */
export function liveUpgrades(options: {
  sessions: LiveSessions;
  clusterSecret: string;
  logger: Logger;
}): LiveUpgradeHandler {
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: MAX_VIEWER_MESSAGE_BYTES,
  });
  return (req, socket, head) => {
    const sessionId = PATH.exec(req.url ?? '')?.[1];
    if (!(req.url ?? '').startsWith('/live/')) return false;
    const requestId = req.headers[REQUEST_ID_HEADER];
    const log = options.logger.child({ request_id: requestId, session_id: sessionId });
    let session: BrowserSession;
    let mode: LiveMode;
    try {
      if (!clusterSecretMatches(req.headers[CLUSTER_SECRET_KEY], options.clusterSecret))
        throw new SwitchboardError('unauthorized');
      const keyId = req.headers[LIVE_KEY_ID_HEADER];
      const asked = req.headers[LIVE_MODE_HEADER];
      if (!sessionId || typeof keyId !== 'string') throw new SwitchboardError('session_not_found');
      if (asked !== 'view' && asked !== 'interact') throw new SwitchboardError('invalid_request');
      mode = asked;
      session = options.sessions.liveSession(sessionId, keyId);
    } catch (error) {
      refuseUpgrade(socket, error, requestId);
      return true;
    }
    wss.handleUpgrade(req, socket, head, (client) => {
      new LiveView(session, client, mode, log);
      log.debug({ mode }, 'live viewer connected');
    });
    return true;
  };
}
