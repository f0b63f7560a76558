import type { ServiceDefinition, UntypedHandleCall } from '@grpc/grpc-js';
import { SwitchboardError } from '@switchboard/errors';
import type { ServiceRegistration } from './server.js';

type Wrap = (service: ServiceRegistration) => Record<string, UntypedHandleCall>;

const notReady = () =>
  new SwitchboardError('unavailable', { message: 'This replica is still starting; try another.' });

/**
 * A service registered on the server before its implementation exists (one built only once the
 * port is bound: a worker that publishes its own address). A service the server does not know yet
 * would answer UNIMPLEMENTED, which a caller takes for a bug; this one answers `unavailable` until
 * `serve` gives it the implementation, then forwards each method to it.
 */
export class LateService {
  readonly handlers: Record<string, UntypedHandleCall> = {};
  private current: Record<string, UntypedHandleCall>;

  constructor(
    readonly definition: ServiceDefinition,
    private readonly wrap: Wrap,
  ) {
    const placeholder: Record<string, unknown> = {};
    for (const [method, { responseStream }] of Object.entries(definition)) {
      placeholder[method] = responseStream
        ? // eslint-disable-next-line require-yield -- a stream that fails before its first message
          async function* () {
            throw notReady();
          }
        : () => Promise.reject(notReady());
      this.handlers[method] = ((...args: unknown[]) =>
        (this.current[method] as (...a: unknown[]) => void)(...args)) as UntypedHandleCall;
    }
    this.current = wrap({ definition, implementation: placeholder });
  }

  serve(service: ServiceRegistration): void {
    this.current = this.wrap(service);
  }
}
