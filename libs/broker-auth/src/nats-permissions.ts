import type { ClusterResources, NatsRole } from './resources.js';

/** A NATS user's permissions, as nats-server's configuration spells them. */
export interface NatsPermissions {
  publish: { allow: string[] };
  subscribe: { allow: string[] };
}

/**
 * Each service's replies come to inboxes under a prefix of its own, and it may subscribe to
 * nothing else there: on the shared `_INBOX.>` any client could read the answers meant for
 * another — the gateway's key records among them.
 */
export const inboxPrefix = (role: NatsRole): string => `_INBOX_${role}`;

/**
 * Reading a KV bucket: opening it (created when absent, as every user of a bucket does at start),
 * getting entries (direct or through the stream) and watching it (an ordered consumer, with its
 * flow-control replies).
 */
function kvRead(bucket: string): string[] {
  const stream = `KV_${bucket}`;
  return [
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.CREATE.${stream}`,
    `$JS.API.STREAM.MSG.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}.>`,
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.INFO.${stream}.*`,
    `$JS.API.CONSUMER.DELETE.${stream}.*`,
    `$JS.FC.${stream}.>`,
  ];
}

/** Reading and writing a KV bucket: puts, compare-and-set updates and deletes are publishes. */
const kvWrite = (bucket: string): string[] => [...kvRead(bucket), `$KV.${bucket}.>`];

/**
 * The animation work queue's stream: set up (stream and durable consumers, by whichever process
 * starts first), read (pending counts, the oldest waiting message) and taken from (pull, ack).
 */
function jobStream(stream: string): string[] {
  return [
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.CREATE.${stream}`,
    `$JS.API.STREAM.UPDATE.${stream}`,
    `$JS.API.DIRECT.GET.${stream}`,
    `$JS.API.STREAM.MSG.GET.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.*`,
    `$JS.API.CONSUMER.INFO.${stream}.*`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.*`,
    `$JS.ACK.${stream}.>`,
  ];
}

/**
 * The events stream, for the webhook sender: set up (the stream over every event subject and the
 * sender's durable consumer), read (pull, ack, nak) — never purged, deleted or published to.
 */
function eventStream(stream: string): string[] {
  return [
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.CREATE.${stream}`,
    `$JS.API.STREAM.UPDATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.*`,
    `$JS.API.CONSUMER.INFO.${stream}.*`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.*`,
    `$JS.ACK.${stream}.>`,
  ];
}

/**
 * What each service may publish and subscribe to; nothing else is allowed. Only gateways touch
 * the key store; browser workers see only the session registry; animation workers only the job
 * system; the webhook sender only the events stream. Every other service may publish events;
 * none may subscribe to them — the sender reads them through its consumer and publishes none
 * (it is the one process that talks to the outside, so it gets the least). Model workers (llm,
 * whisper, diffusion) have no NATS user at all: they never connect.
 */
export function natsPermissions(role: NatsRole, resources: ClusterResources): NatsPermissions {
  const events = role === 'webhooks' ? [] : [`${resources.eventsPrefix}.>`];
  const common = ['$JS.API.INFO', ...events];
  const registry = [resources.browserWorkersBucket, resources.browserSessionsBucket];
  const jobs = [...jobStream(resources.jobsStream), ...resources.jobBuckets.flatMap(kvWrite)];
  const publish: Record<NatsRole, string[]> = {
    gateway: [
      ...kvWrite(resources.keysBucket),
      ...kvWrite(resources.keysUsageBucket),
      ...registry.flatMap(kvRead),
      ...kvWrite(resources.browserRefusalsBucket),
      ...kvWrite(resources.browserLiveLinksBucket),
      ...jobs,
      // Submitting a job, and taking a cancelled one out of the queue.
      `${resources.jobsSubjectPrefix}.>`,
      `$JS.API.STREAM.MSG.DELETE.${resources.jobsStream}`,
    ],
    browser: registry.flatMap(kvWrite),
    animation: jobs,
    webhooks: eventStream(resources.eventsStream),
  };
  return {
    publish: { allow: [...common, ...publish[role]] },
    subscribe: { allow: [`${inboxPrefix(role)}.>`] },
  };
}
