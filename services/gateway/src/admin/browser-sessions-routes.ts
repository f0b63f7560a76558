import { z } from 'zod';
import { SwitchboardError } from '@switchboard/errors';
import { callContext } from '../clients/call-context.js';
import { adminSurface } from '../contract/administration.js';
import { SessionClosed } from '../contract/browser-sessions.js';
import { adminErrors, json, workerErrors } from '../contract/responses.js';
import { route } from '../http/route.js';
import { sessionIdParam } from '../sessions/session-id.js';
import { closedView } from '../sessions/session-view.js';

/**
 * The admin force-closes any key's browser session, as its owner's close would (same worker call,
 * same `browser.session.closed` event, same idempotent answer). The session router checks
 * ownership on every call, so the call is made in the owner's name, read from the session registry.
 */
export const adminBrowserSessionRoute = route({
  method: 'delete',
  path: '/admin/api/browser/sessions/{id}',
  operationId: 'closeAnyBrowserSession',
  ...adminSurface,
  summary: "Close any key's browser session",
  description:
    "As the owner's close: the same worker call, the same `browser.session.closed` event, and closing a closed session again is also `200`.",
  params: z.object({
    id: z.uuid().meta({ description: 'The browser session id (UUID v4), of any key.' }),
  }),
  responses: {
    200: { description: 'The session is closed; its browser process is gone.', content: json(SessionClosed) },
  },
  errors: [...adminErrors, 'session_not_found', ...workerErrors],
  async handle({ req, res, deps }) {
    const { browser } = deps.clients;
    const id = sessionIdParam(req);
    const session = browser.listSessions().find((s) => s.session_id === id);
    if (!session) throw new SwitchboardError('session_not_found');
    return closedView(await browser.close(id, { ...callContext(res), keyId: session.owner_key_id }));
  },
});
