import type { Request } from 'express';
import { SwitchboardError } from '@switchboard/errors';

/** Session ids are made by `randomUUID()`: lowercase v4 only, so each has one object key. */
const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function isSessionId(value: string): boolean {
  return uuidV4.test(value);
}

/** A session id that is not a UUID v4 cannot exist: answer 404 without asking anyone. */
export function sessionIdParam(req: Request): string {
  const id = String(req.params.id).toLowerCase();
  if (!uuidV4.test(id)) throw new SwitchboardError('session_not_found');
  return id;
}
