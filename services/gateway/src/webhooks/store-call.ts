import { SwitchboardError, dependencyUnavailable } from '@switchboard/errors';
import { WebhookInputError } from '@switchboard/webhooks';

/**
 * A call of the webhook store as the API answers it: the store's refusal of client input is a 400
 * naming the field, anything else (PostgreSQL away) is `503 unavailable` rather than a 500.
 */
export async function storeCall<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof SwitchboardError) throw error;
    if (error instanceof WebhookInputError) {
      throw new SwitchboardError('invalid_request', { param: error.param, message: error.message });
    }
    throw dependencyUnavailable('Webhooks cannot be read or changed right now. Try again shortly.', error);
  }
}

export const endpointNotFound = (): SwitchboardError =>
  new SwitchboardError('not_found', { message: 'No such webhook endpoint.' });
