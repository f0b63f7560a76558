import { SwitchboardError } from '@switchboard/errors';
import type { z } from 'zod';

/**
 * Validates a parsed body (or query) against a schema. Unknown fields are dropped; the first
 * problem becomes a 400 naming its field in `param`, as the error body promises.
 */
export function validate<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new SwitchboardError('invalid_request', { message: 'The body must be a JSON object.' });
  }
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = issue?.path.map(String).join('.') || undefined;
  throw new SwitchboardError('invalid_request', {
    message: param
      ? `${param}: ${issue?.message ?? 'invalid value'}`
      : (issue?.message ?? 'Invalid request.'),
    param,
  });
}
