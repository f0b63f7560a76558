// Wiring only: which method of the session service answers which RPC.
import { defineService, type RequestContext, type ServiceRegistration } from '@switchboard/grpc';
import type { SessionService } from './sessions/session-service.js';

/** The caller's key id from call metadata; the gateway always sends one for session calls. */
const key = (ctx: RequestContext) => ctx.keyId ?? '';

export function browserService(sessions: SessionService): ServiceRegistration {
  return defineService('Browser', {
    CreateSession: (request, ctx) => sessions.create(request, key(ctx)),
    Navigate: (request, ctx) => sessions.navigate(request, key(ctx)),
    Input: (request, ctx) => sessions.input(request, key(ctx)),
    Submit: (request, ctx) => sessions.submit(request, key(ctx)),
    Capture: (request, ctx) => sessions.capture(request.session_id, key(ctx)),
    Content: (request, ctx) => sessions.content(request, key(ctx)),
    Pdf: (request, ctx) => sessions.pdf(request, key(ctx)),
    GetDetails: async (request, ctx) => sessions.details(request.session_id, key(ctx)),
    CloseSession: (request, ctx) => sessions.close(request.session_id, key(ctx)),
    GetCapacity: async () => sessions.capacity(),
    ListSessions: async () => ({ sessions: sessions.list() }),
  });
}
