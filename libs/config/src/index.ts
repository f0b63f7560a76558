export { loadConfig, ConfigError } from './load.js';
export { deepFreeze, type DeepReadonly } from './freeze.js';
export * as env from './fields.js';
export { isCidr } from './fields.js';
export {
  envVariables,
  renderEnvTable,
  renderConfigurationDoc,
  UndocumentedEnvError,
  type EnvVariable,
  type ServiceEnv,
} from './env-table.js';
