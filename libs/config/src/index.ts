export { loadConfig, ConfigError } from './load.js';
export { deepFreeze, type DeepReadonly } from './freeze.js';
export * as env from './fields.js';
export { isCidr } from './fields.js';
