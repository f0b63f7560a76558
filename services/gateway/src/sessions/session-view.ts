import { sessionDetails } from '@switchboard/contracts';
import type { z } from 'zod';
import type { Session } from '../clients/session-router.js';
import type { SessionEndReason, SessionStatus } from '../contract/browser-sessions.js';

// The worker's proto fields are strings; these views name the values the workers send.

/** A session as its details show it. */
export function detailsView(session: Session) {
  const details = sessionDetails(session);
  return {
    ...details,
    status: details.status as SessionStatus,
    end_reason: details.end_reason as z.infer<typeof SessionEndReason>,
  };
}

/** What closing a session answers, its owner's close and an admin's alike. */
export function closedView(session: Pick<Session, 'session_id' | 'status'>) {
  return { session_id: session.session_id, status: session.status as 'closed' };
}
