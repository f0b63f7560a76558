export { loadConfig, ConfigError } from './load.js';
export * as env from './fields.js';
export { isCidr } from './fields.js';
