/**
 * @switchboard/grpc — gRPC plumbing shared by every worker and the gateway.
 *
 * Workers:  startGrpcServer({ port, logger, clusterSecret, services: [defineService('Llm', { … })] }), then
 *           server.health.setAll('SERVING') once models are loaded, server.shutdown(graceMs) from
 *           the worker's close(); its main.ts is runWorkerProcess({ service, loadConfig, start, … }).
 *           Handlers are `async (request, ctx) => response`, `async function* (request, ctx)` for
 *           server streaming, `async (requests, ctx) => response` for client streaming; ctx carries
 *           requestId, keyId, a child logger and an AbortSignal; a thrown SwitchboardError reaches
 *           the caller as its code, anything else as `internal`.
 * Gateway:  createClient(Llm, address, { deadlineMs, clusterSecret }), unary(client.Complete.bind(client), req,
 *           callMetadata({ requestId, keyId })), checkHealth(address). For a worker with replicas:
 *           new ReplicaPool(Llm, 'llm:50051', { deadlineMs, clusterSecret, dnsServer }), then
 *           pool.unary((c) => c.Complete.bind(c), req, metadata), pool.stream(…), pool.replicas().
 * TLS:      startGrpcServer({ …, tls: { certFile, keyFile, caFile }, healthPort }) on a worker; on the
 *           gateway one transport = clientTransport({ caFile, certFile, keyFile, serverName }) shared
 *           by every createClient / ReplicaPool ({ …, transport }). The files are re-read while
 *           the process runs, so renewed certificates reach new connections without a restart.
 */
export {
  clientKeepalive,
  serverConnectionAge,
  serverKeepalive,
  retryServiceConfig,
} from './channel-options.js';
export {
  createClient,
  unary,
  type ClientConstructor,
  type CreateClientOptions,
  type UnaryMethod,
  type UnaryOptions,
} from './client.js';
export type { RequestContext } from './context.js';
export { ReplicaPool, type ReplicaListener, type ReplicaPoolOptions } from './replica-pool.js';
export type { ReplicaInfo, ReplicaStatus } from './replica.js';
export { hostResolver, parseTarget, type ResolveHost, type WorkerTarget } from './replica-resolver.js';
export type {
  ClientStreamHandler,
  ContextHandler,
  ContextImplementation,
  ServerStreamHandler,
  UnaryHandler,
} from './handlers.js';
export { HealthReporter, OVERALL, type ReportedStatus, type ServingStatus } from './health.js';
export { checkHealth, waitForServing, type HealthStatus, type WaitOptions } from './health-check.js';
export { callMetadata, metadataKeys, readMetadata, type CallIdentity } from './metadata.js';
export {
  defineService,
  startGrpcServer,
  type GrpcServer,
  type GrpcServerOptions,
  type ServiceRegistration,
} from './server.js';
export { shutdownOnSignals, type Closable, type SignalOptions } from './signals.js';
export { closeOnce, startWithRollback, type OnRollback } from './lifecycle.js';
export {
  checkingServerName,
  clientTransport,
  plaintextTransport,
  serverTransport,
  TLS_REFRESH_INTERVAL_MS,
  type ClientTls,
  type ClientTransport,
  type ServerTls,
  type ServerTransport,
} from './tls.js';
export { watchTlsFiles, type TlsFilePaths, type TlsFileWatch, type TlsPems } from './tls-files.js';
export { runWorkerProcess, type WorkerProcessOptions } from './worker-process.js';
export {
  CLUSTER_SECRET_KEY,
  CLUSTER_SECRET_MIN_LENGTH,
  clusterSecretInterceptor,
  clusterSecretMatches,
} from './cluster-auth.js';
