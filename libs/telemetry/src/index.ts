export { createLogger, type Logger, type LoggerOptions } from './logger.js';
export { createRegistry, startMetricsServer, type MetricsServer } from './metrics.js';
export { failSpan, startSpan, withSpan } from './spans.js';
