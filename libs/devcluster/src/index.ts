export { freePort, canConnect } from './ports.js';
export { findExecutable, ManagedProcess, type ProcessOptions } from './process.js';
export {
  startNats,
  startRedis,
  type InfraHandle,
  type NatsHandle,
  type RedisHandle,
  type BrokerHandle,
  type StartNatsOptions,
  type StartRedisOptions,
} from './infra.js';
export { startPostgres, postgresBinDir, type PostgresHandle, type StartPostgresOptions } from './postgres.js';
export { startCluster, workerNames, type Cluster, type ClusterOptions } from './cluster.js';
export { startDnsServer, type DnsServer } from './dns-server.js';
export {
  defaultSwitches,
  startFakeDid,
  type FakeDid,
  type FakeDidOptions,
  type FakeDidRequest,
  type FakeDidSwitches,
  type TalkOutcome,
} from './fake-d-id.js';
export { runTool } from './run-tool.js';
