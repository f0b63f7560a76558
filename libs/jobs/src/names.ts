// Where animation jobs live in NATS. One place for every name, because the gateway, the workers,
// the chart's KEDA triggers and operators' dashboards must all agree on them.

export const backendNames = ['video-diffusion', 'portrait', 'avatar'] as const;
export type BackendName = (typeof backendNames)[number];

export interface JobNames {
  /** Work-queue stream of job messages (file storage): each message is taken by one worker. */
  readonly stream: string;
  /** Subject of a back-end's jobs; the stream holds `<subjectPrefix>.>`. */
  readonly subject: (backend: BackendName) => string;
  readonly subjectPrefix: string;
  /** Durable pull consumer of a back-end (the KEDA trigger watches its pending messages). */
  readonly consumer: (backend: BackendName) => string;
  /** KV bucket of job records, keyed `<owner key id>.<job id>`. */
  readonly jobsBucket: string;
  /** KV bucket of Idempotency-Key claims (24 h), keyed `<owner key id>.<sha256 of the key>`. */
  readonly idempotencyBucket: string;
  /** KV bucket of each key's queued + running job ids (the tier limit), keyed by owner key id. */
  readonly activeBucket: string;
  /** KV bucket where workers describe their back-ends (what /models shows, avatar configured?). */
  readonly backendsBucket: string;
}

/**
 * The names, optionally under a prefix (tests give each case its own). The defaults are what the
 * chart's KEDA ScaledObject names: stream SWITCHBOARD_ANIMATE, consumers animation-<backend>.
 */
export function jobNames(prefix = ''): JobNames {
  const subjectPrefix = `${prefix ? `${prefix}.` : ''}switchboard.animate.jobs`;
  const upper = prefix.toUpperCase().replace(/[^A-Z0-9]/g, '_');
  const lower = prefix.toLowerCase().replace(/[^a-z0-9]/g, '_');
  const bucket = (name: string) => `${lower ? `${lower}_` : ''}switchboard_animation_${name}`;
  return {
    stream: `${upper ? `${upper}_` : ''}SWITCHBOARD_ANIMATE`,
    subjectPrefix,
    subject: (backend) => `${subjectPrefix}.${backend}`,
    consumer: (backend) => `${lower ? `${lower}-` : ''}animation-${backend}`,
    jobsBucket: bucket('jobs'),
    idempotencyBucket: bucket('idempotency'),
    activeBucket: bucket('active'),
    backendsBucket: bucket('backends'),
  };
}
