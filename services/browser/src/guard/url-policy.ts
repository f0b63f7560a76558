import { SwitchboardError } from '@switchboard/errors';
import {
  blockedAddress,
  blockedRange,
  ipFamily,
  isLocalhostName,
  normalizeHost,
  portNotAllowed,
  portOf,
  UrlNotAllowedError,
  type AllowedHosts,
} from '@switchboard/address-guard';

const webSchemes = new Set(['http:', 'https:']);

/**
 * The check before a navigation: a web URL, no credentials, no blocked address literal and an
 * allowed port (80, 443 or the operator's, allowed-ports.ts). Host names are only judged here when they are loopback by definition (`localhost`); what a
 * name resolves to is judged by the forward proxy at connect time, on every request.
 */
export function checkNavigationUrl(raw: string, allowed: AllowedHosts): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new SwitchboardError('invalid_request', { param: 'url', message: 'url is not a valid URL.' });
  }
  if (!webSchemes.has(url.protocol)) {
    throw new UrlNotAllowedError('scheme', 'Only http and https URLs may be opened.');
  }
  // Chromium would send them as Authorization to whatever the host turns out to be.
  if (url.username !== '' || url.password !== '') {
    throw new UrlNotAllowedError('credentials', 'URLs with a user name or password may not be opened.');
  }
  const host = normalizeHost(url.hostname);
  if (host === null) throw new UrlNotAllowedError('invalid', 'The URL has no usable host.');
  const port = portOf(url);
  if (!allowed.allows(host, port)) {
    const range = ipFamily(host) !== 0 ? blockedRange(host) : isLocalhostName(host) ? 'loopback' : null;
    if (range !== null) throw blockedAddress(range);
  }
  if (!allowed.allowsPort(host, port)) throw portNotAllowed(port, allowed);
  return url;
}
