import {
  AllowedHosts,
  AllowedPorts,
  HostUnresolvedError,
  normalizeHost,
  portOf,
  UrlNotAllowedError,
} from '@switchboard/address-guard';

/**
 * `WEBHOOK_ALLOWED_HOSTS`: hosts exempt from the address guard, which may also be reached over
 * `http://`. Any port: an endpoint names its port on purpose; its address keeps the cluster's insides
 * out of reach.
 */
export function webhookAllowedHosts(entries: readonly string[]): AllowedHosts {
  return AllowedHosts.parse(entries, AllowedPorts.any(), 'WEBHOOK_ALLOWED_HOSTS');
}

/**
 * The rules of an endpoint URL itself, the same at registration (the gateway) and at every attempt
 * (the sender): `https://`, or `http://` to an exempt host, and no user name or password (it would
 * be sent with every attempt and shown in every view). What its host resolves to is judged apart,
 * by `resolveAllowed`, with the host and port this returns.
 *
 * @throws UrlNotAllowedError for the scheme or credentials; HostUnresolvedError for a URL with no usable host.
 */
export function checkWebhookUrl(url: URL, allowed: AllowedHosts): { host: string; port: number } {
  const host = normalizeHost(url.hostname);
  if (host === null) throw new HostUnresolvedError(url.hostname);
  const port = portOf(url);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowed.allows(host, port))) {
    throw new UrlNotAllowedError('scheme', 'Webhook URLs must use https://.');
  }
  if (url.username !== '' || url.password !== '') {
    throw new UrlNotAllowedError(
      'credentials',
      'Webhook URLs may not carry credentials (a user name or password).',
    );
  }
  return { host, port };
}
