export { loadConfig, ConfigError } from './load.js';
export { deepFreeze, type DeepReadonly } from './freeze.js';
export * as env from './fields.js';
export { isCidr } from './fields.js';
export { childProcessEnv, CHILD_ENV_NAMES } from './child-env.js';
export {
  envVariables,
  renderEnvTable,
  renderConfigurationDoc,
  UndocumentedEnvError,
  type EnvVariable,
  type ServiceEnv,
} from './env-table.js';
export {
  checkGrpcClientTlsEnv,
  checkGrpcServerTlsEnv,
  grpcClientTlsEnvFields,
  grpcClientTlsFrom,
  grpcServerTlsEnvFields,
  grpcServerTlsFrom,
  type ClientTlsFiles,
  type ServerTlsFiles,
} from './grpc-tls.js';
