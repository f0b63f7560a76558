import { retryCreationRace } from '@switchboard/events';
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { KV, NatsConnection } from 'nats';
import { defaultResources } from '@switchboard/broker-auth';

export type LiveMode = 'view' | 'interact';

/** A live-view link as kept: the token itself never is, only the SHA-256 of its secret part. */
export interface LiveLink {
  live_id: string;
  session_id: string;
  owner_key_id: string;
  mode: LiveMode;
  expires_at_ms: number;
  secret_sha256: string;
}

export interface IssuedLiveLink {
  link: LiveLink;
  /** `<live_id>.<secret>`: shown once, in the link's URL. */
  token: string;
}

/** ttl_s's bounds (§6b): a minute to a day. */
export const LIVE_TTL_MIN_S = 60;
export const LIVE_TTL_MAX_S = 86_400;
/** The bucket drops every record a little after the longest link could still be used. */
const BUCKET_MAX_AGE_MS = (LIVE_TTL_MAX_S + 60) * 1000;
/** 256 random bits: far past guessing, and past the ≥ 128 the contract asks for. */
const SECRET_BYTES = 32;
const TOKEN = /^([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Live-view links in a NATS KV bucket every gateway replica shares (gateways only may touch it):
 * any replica resolves a token another issued, and a revocation on one is seen by all.
 */
export class LiveLinks {
  private constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection): Promise<LiveLinks> {
    // Gateway replicas starting together create the same bucket.
    const kv = await retryCreationRace(() =>
      nc
        .jetstream()
        .views.kv(defaultResources.browserLiveLinksBucket, { history: 1, ttl: BUCKET_MAX_AGE_MS }),
    );
    return new LiveLinks(kv);
  }

  async create(input: {
    sessionId: string;
    ownerKeyId: string;
    mode: LiveMode;
    ttlS: number;
  }): Promise<IssuedLiveLink> {
    const liveId = randomUUID();
    const secret = randomBytes(SECRET_BYTES).toString('base64url');
    const link: LiveLink = {
      live_id: liveId,
      session_id: input.sessionId,
      owner_key_id: input.ownerKeyId,
      mode: input.mode,
      expires_at_ms: Date.now() + input.ttlS * 1000,
      secret_sha256: sha256(secret),
    };
    await this.kv.put(liveId, JSON.stringify(link));
    return { link, token: `${liveId}.${secret}` };
  }

  /** The link as stored now, or null once revoked, expired or never made. */
  async current(liveId: string, now = Date.now()): Promise<LiveLink | null> {
    const entry = await this.kv.get(liveId);
    if (!entry || entry.operation !== 'PUT') return null;
    let link: LiveLink;
    try {
      link = JSON.parse(entry.string()) as LiveLink;
    } catch {
      return null;
    }
    return link.expires_at_ms > now ? link : null;
  }

  /** The link a token stands for; null for anything else (malformed, wrong secret, revoked, expired). */
  async resolve(token: string): Promise<LiveLink | null> {
    const parts = TOKEN.exec(token);
    if (!parts) return null;
    const link = await this.current(parts[1]!);
    if (!link) return null;
    const given = Buffer.from(sha256(parts[2]!), 'hex');
    const kept = Buffer.from(link.secret_sha256, 'hex');
    return given.length === kept.length && timingSafeEqual(given, kept) ? link : null;
  }

  /** Revokes one of the session's links; false when the session has no such link. */
  async revoke(sessionId: string, liveId: string): Promise<boolean> {
    const link = await this.current(liveId).catch(() => null);
    if (!link || link.session_id !== sessionId) return false;
    await this.kv.delete(liveId);
    return true;
  }
}
