/**
 * @switchboard/events — the NATS events of API.md §8 (`switchboard.events.<area>.<event>`), one
 * publisher for every process that emits them.
 */
export { EventPublisher } from './publisher.js';
