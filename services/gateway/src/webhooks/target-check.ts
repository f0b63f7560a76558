import {
  HostUnresolvedError,
  resolveAllowed,
  type AllowedHosts,
  type HostResolver,
} from '@switchboard/address-guard';
import { SwitchboardError } from '@switchboard/errors';
import { checkWebhookUrl, webhookAllowedHosts } from '@switchboard/webhooks';

/**
 * The check an endpoint URL passes when it is registered or changed: the same rules and address
 * guard the senders apply at every attempt, run now so a client learns of a refused target at once
 * rather than from a delivery log of failures. Passing it proves nothing about later attempts (DNS
 * may change), which is why the senders check again at connect time.
 */
export class WebhookTargets {
  private readonly allowed: AllowedHosts;

  constructor(
    allowedHosts: readonly string[],
    private readonly resolver: HostResolver,
  ) {
    this.allowed = webhookAllowedHosts(allowedHosts);
  }

  /**
   * @returns the URL as it will be stored (WHATWG-serialised).
   * @throws SwitchboardError `invalid_request` for what is not a URL or a host that does not resolve;
   *   UrlNotAllowedError (`url_not_allowed`) for a refused scheme, credentials or address.
   */
  async check(raw: string): Promise<string> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new SwitchboardError('invalid_request', {
        param: 'url',
        message: 'url: expected an absolute URL.',
      });
    }
    try {
      const { host, port } = checkWebhookUrl(url, this.allowed);
      await resolveAllowed(host, port, { allowed: this.allowed, resolver: this.resolver });
    } catch (error) {
      if (!(error instanceof HostUnresolvedError)) throw error;
      // Not a refusal by the guard: the client may have a typo, or the name is not published yet.
      throw new SwitchboardError('invalid_request', {
        param: 'url',
        message: "url: the URL's host does not resolve.",
        cause: error,
      });
    }
    return url.href;
  }
}
