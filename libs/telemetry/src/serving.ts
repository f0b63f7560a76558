import { Gauge, type Registry } from 'prom-client';

/**
 * Registers `switchboard_serving`: 1 while `isServing()` says the process takes work (its
 * grpc.health.v1 overall status is SERVING), else 0. Read at each scrape, so it can never lag the
 * health status it mirrors.
 */
export function registerServingGauge(registry: Registry, isServing: () => boolean): Gauge {
  return new Gauge({
    name: 'switchboard_serving',
    help: "1 while the worker's grpc.health.v1 overall status is SERVING, else 0.",
    registers: [registry],
    collect() {
      this.set(isServing() ? 1 : 0);
    },
  });
}

/**
 * Registers `switchboard_grpc_calls_in_flight`: the calls the worker's gRPC handlers have taken and
 * not yet answered, read at each scrape. What a draining replica still owes, and a load signal to
 * scale on that no request rate shows for long calls (a stream, a session's navigate).
 */
export function registerCallsInFlightGauge(registry: Registry, callsInFlight: () => number): Gauge {
  return new Gauge({
    name: 'switchboard_grpc_calls_in_flight',
    help: "Calls the worker's gRPC handlers have taken and not yet answered.",
    registers: [registry],
    collect() {
      this.set(callsInFlight());
    },
  });
}
