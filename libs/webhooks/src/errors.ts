/**
 * A client's input the webhooks rules refuse. It carries the error table's `invalid_request` code
 * and the field at fault, so the gateway answers it as any other 400 with `param`.
 */
export class WebhookInputError extends Error {
  readonly code = 'invalid_request' as const;

  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookInputError';
  }
}
