import { SwitchboardError, dependencyUnavailable } from '@switchboard/errors';
import type { KeyRecord, KeyStore } from '@switchboard/keys';
import type { CidrSet } from '../http/client-ip.js';
import type { KeyFreshness } from '../ops/nats-liveness.js';
import { keyAllowsIp } from './ip-allowlists.js';

/** The key a request may act as, or the error that refuses it. */
export type AccessVerdict =
  { key: KeyRecord; error?: undefined } | { key?: undefined; error: SwitchboardError };

/**
 * Whether an API key may act for a client address right now. The one rule behind every new
 * authenticated request (authenticate.ts) and behind every connection that stays open, re-checked
 * by the live-request sweep (live-requests.ts): so an SSE stream or a DevTools socket is held to
 * exactly what a new request would be, and ends with the code a new request would get.
 *
 * In this order: the cluster allowlist; then whether this replica may vouch for any key at
 * all (past KEYS_MAX_STALENESS_MS without NATS a revocation may have been missed); the key; the
 * key's own allowlist. The key is looked up in the replica's view on every call, so a revocation,
 * rotation or allowlist change counts from the moment the view has it.
 */
export class AccessCheck {
  constructor(
    private readonly keys: Pick<KeyStore, 'authenticate'>,
    private readonly freshness: KeyFreshness,
    private readonly clusterAllowlist: CidrSet,
  ) {}

  /** The cluster allowlist alone: it applies before any key is looked at, to every path. */
  clusterAllows(clientIp: string): boolean {
    return this.clusterAllowlist.empty || this.clusterAllowlist.has(clientIp);
  }

  check(token: string | undefined, clientIp: string): AccessVerdict {
    if (!this.clusterAllows(clientIp)) return { error: new SwitchboardError('ip_not_allowed') };
    if (!this.freshness.keysFresh()) {
      return {
        error: dependencyUnavailable(
          'API keys cannot be verified right now (the key store is unreachable); retry shortly.',
        ),
      };
    }
    const key = token === undefined ? null : this.keys.authenticate(token);
    if (!key) return { error: new SwitchboardError('unauthorized') };
    if (!keyAllowsIp(key.ip_allowlist, clientIp)) return { error: new SwitchboardError('ip_not_allowed') };
    return { key };
  }
}
