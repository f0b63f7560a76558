export { createLogger, type Logger, type LoggerOptions } from './logger.js';
export {
  extractTraceContext,
  injectTraceContext,
  startTracing,
  tracingEnabled,
  type HeaderCarrier,
  type Tracing,
  type TracingOptions,
} from './tracing.js';
export { createRegistry, startMetricsServer, type MetricsServer } from './metrics.js';
export {
  natsProbe,
  objectStoreProbe,
  OBJECT_STORE_PROBE_KEY,
  redisProbe,
  startDependencyProbes,
  type DependencyProbe,
  type DependencyProbeOptions,
  type DependencyProbes,
} from './dependency-health.js';
export { registerCallsInFlightGauge, registerServingGauge } from './serving.js';
export { failSpan, startSpan, withSpan } from './spans.js';
export {
  captureTraceParent,
  PhaseSpans,
  startSpanIn,
  withSpanIn,
  type Span,
  type SpanAttributes,
  type TraceParent,
} from './trace-context.js';
