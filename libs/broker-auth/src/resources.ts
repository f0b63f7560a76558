/**
 * What the cluster keeps on NATS, by name: the buckets, streams and subjects each service's
 * permissions are written against. The libraries that use them (keys, browser-registry, jobs,
 * events) keep their own constants; test/integration/broker-permissions.test.ts checks the two
 * agree, so a renamed bucket cannot silently fall outside every permission.
 */
export interface ClusterResources {
  /** API key records (written by gateways only) and their last-used times. */
  readonly keysBucket: string;
  readonly keysUsageBucket: string;
  /** The browser session registry: one record per worker, one per session. */
  readonly browserWorkersBucket: string;
  readonly browserSessionsBucket: string;
  /** Keys recently turned away for lack of browsers (gateways only: the capacity share). */
  readonly browserRefusalsBucket: string;
  /** Live-view links (hashed tokens): written and read by gateways only, never by a worker. */
  readonly browserLiveLinksBucket: string;
  /** The animation work queue: its stream, job subjects and the buckets beside it. */
  readonly jobsStream: string;
  readonly jobsSubjectPrefix: string;
  readonly jobBuckets: readonly string[];
  /** Every event's subject starts with this (`<prefix>.<area>.<event>`). */
  readonly eventsPrefix: string;
  /** The stream that keeps every event for the webhook sender (its durable consumer reads it). */
  readonly eventsStream: string;
}

export const defaultResources: ClusterResources = {
  keysBucket: 'switchboard_keys',
  keysUsageBucket: 'switchboard_keys_usage',
  browserWorkersBucket: 'browser_workers',
  browserSessionsBucket: 'browser_sessions',
  browserRefusalsBucket: 'browser_capacity_refusals',
  browserLiveLinksBucket: 'browser_live_links',
  jobsStream: 'SWITCHBOARD_ANIMATE',
  jobsSubjectPrefix: 'switchboard.animate.jobs',
  jobBuckets: [
    'switchboard_animation_jobs',
    'switchboard_animation_idempotency',
    'switchboard_animation_active',
    'switchboard_animation_backends',
  ],
  eventsPrefix: 'switchboard.events',
  eventsStream: 'SWITCHBOARD_EVENTS',
};

/** The services that connect to NATS, each with a user (and permissions) of its own. */
export const natsRoles = ['gateway', 'browser', 'animation', 'webhooks'] as const;
export type NatsRole = (typeof natsRoles)[number];

/** The services that connect to Redis. */
export const redisRoles = ['gateway'] as const;
export type RedisRole = (typeof redisRoles)[number];
