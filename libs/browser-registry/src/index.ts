/**
 * @switchboard/browser-registry — where browser sessions live (docs/browser-sessions.md).
 *
 * Browser workers: RegistryAnnouncer.open(nats, { workerId, grpcAddress, devtoolsAddress }), then
 *                  announce(capacity) every heartbeat and putSession(session) on every change.
 * Gateways:        BrowserFleet.open(nats, { logger }) keeps a watched view: session(id) to route a
 *                  call, pickWorker() to place a new session, activeSessionsOf(keyId) for tier limits,
 *                  usage() and recordRefusal()/waitingKeys() for each key's share of the capacity.
 * Record shapes are WorkerRecord and SessionRecord in proto/browser/v1/registry.proto.
 */
export { RegistryAnnouncer, type Capacity, type WorkerIdentity } from './announcer.js';
export { BrowserFleet, DEFAULT_STALE_AFTER_MS, type FleetOptions, type FleetUsage } from './fleet.js';
export {
  CAPACITY_REFUSAL_WINDOW_MS,
  CAPACITY_REFUSALS_BUCKET,
  type CapacityRefusal,
  decodeSession,
  decodeWorker,
  SESSION_REFRESH_INTERVAL_MS,
  SESSIONS_BUCKET,
  WORKERS_BUCKET,
  type SessionRecord,
  type WorkerRecord,
} from './records.js';
