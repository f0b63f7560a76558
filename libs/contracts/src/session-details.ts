import type { Session__Output } from './generated/switchboard/browser/v1/Session.js';

/**
 * A browser session as its owner sees it (`details`), built from the worker's record: the gateway
 * answers it and the worker's events carry it, so the two can never describe a session differently.
 */
export function sessionDetails(session: Session__Output) {
  return {
    session_id: session.session_id,
    status: session.status,
    created_at: session.created_at,
    // Nothing committed yet reads as null rather than an empty string.
    current_url: session.current_url || null,
    history: session.history,
    screenshots: session.screenshots,
    pdfs: session.pdfs,
    // Empty while the session is active.
    end_reason: session.end_reason || null,
  };
}
