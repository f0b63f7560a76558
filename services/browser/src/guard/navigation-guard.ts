import { SwitchboardError } from '@switchboard/errors';
import {
  type AllowedHosts,
  type HostResolver,
  HostUnresolvedError,
  portOf,
  resolveAllowed,
} from '@switchboard/address-guard';
import { checkNavigationUrl } from './url-policy.js';

/**
 * The check before a top-level navigation: scheme, literal address, and what the name resolves
 * to now, so the caller gets `400 url_not_allowed` (or `502` for a name that does not exist)
 * without Chromium starting a request. The proxy checks again at connect time, and on every
 * redirect and sub-request, so a name that changes its answer afterwards gains nothing.
 */
export function navigationGuard(
  allowed: AllowedHosts,
  resolver: HostResolver,
): (raw: string) => Promise<void> {
  return async (raw) => {
    const url = checkNavigationUrl(raw, allowed);
    try {
      await resolveAllowed(url.hostname, portOf(url), { allowed, resolver });
    } catch (error) {
      if (!(error instanceof HostUnresolvedError)) throw error;
      throw new SwitchboardError('navigation_failed', {
        message: 'The host name could not be resolved.',
        cause: error,
      });
    }
  };
}
