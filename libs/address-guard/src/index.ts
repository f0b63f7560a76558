/**
 * @switchboard/address-guard — what every connection the cluster makes to a tenant's URL passes
 * (a browser session's pages, a webhook delivery): loopback, private, link-local, CGNAT, metadata
 * and other non-public addresses refused, names judged by every address they resolve to at
 * connect time, and the operator's exact exemptions.
 */
export { AllowedHosts, type AllowedHostEntry } from './allowed-hosts.js';
export { AllowedPorts, WEB_PORTS } from './allowed-ports.js';
export { blockedRange } from './blocked-addresses.js';
export { ipFamily, isLocalhostName, normalizeHost, parseAuthority, type Authority } from './host-names.js';
export {
  dnsServerResolver,
  HostUnresolvedError,
  systemResolver,
  type DnsServerResolverOptions,
  type HostResolver,
  type ResolvedAddress,
} from './host-resolver.js';
export {
  blockedAddress,
  portNotAllowed,
  portOf,
  resolveAllowed,
  UrlNotAllowedError,
  type ResolveDeps,
} from './resolve-allowed.js';
