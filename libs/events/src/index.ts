/**
 * @switchboard/events — the NATS events of the cluster (`switchboard.events.<area>.<event>`), one
 * publisher for every process that emits them, and the JetStream set-up replicas share.
 */
export { EventPublisher } from './publisher.js';
export { isEventId, newEventId, timeSortableId } from './ids.js';
export { sendTraced, traceContextOf, traceHeaders, type TraceParent } from './trace.js';
export { retryCreationRace } from './creation-race.js';
