import type { Router } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import { callContext } from '../clients/call-context.js';
import { exactRouter } from '../http/router.js';
import { sessionIdParam } from '../routes/session-id.js';
import type { SessionRouter } from '../sessions/session-router.js';

/**
 * /admin/api/browser/sessions/{id}: the admin force-closes any key's browser session, as its
 * owner's close would (same worker call, same `browser.session.closed` event, same idempotent
 * answer). The session router checks ownership on every call, so the call is made in the owner's
 * name, read from the session registry.
 */
export function browserSessionsRouter(browser: SessionRouter): Router {
  const router = exactRouter();

  router.delete('/browser/sessions/:id', async (req, res) => {
    const id = sessionIdParam(req);
    const session = browser.listSessions().find((s) => s.session_id === id);
    if (!session) throw new SwitchboardError('session_not_found');
    const closed = await browser.close(id, { ...callContext(res), keyId: session.owner_key_id });
    res.json({ session_id: closed.session_id, status: closed.status });
  });

  return router;
}
