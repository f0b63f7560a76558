/**
 * The gateway's metering as a module, for the tests that run it on a real store and real NATS:
 * the service, its metrics, and the event publisher it is built with.
 */
export { Metering, MeteredCall, type AdmitRequest, type MeteringDeps } from './metering.js';
export { createGatewayMetrics, type GatewayMetrics } from '../ops/metrics.js';
export { EventPublisher } from '@switchboard/events';
