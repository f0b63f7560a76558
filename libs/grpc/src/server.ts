import { type ChannelOptions, Server, ServerCredentials, type ServiceDefinition } from '@grpc/grpc-js';
import { Health, type ServiceTypes, services as contractServices } from '@switchboard/contracts';
import type { Logger } from '@switchboard/telemetry';
import { serverConnectionAge, serverKeepalive } from './channel-options.js';
import { clusterAuthInterceptor } from './cluster-auth.js';
import { OpenCalls } from './context.js';
import { type ContextImplementation, wrapImplementation } from './handlers.js';
import { LateService } from './late-service.js';
import { HealthReporter, type ReportedStatus, serviceNameOf } from './health.js';
import { type ServerTls, TLS_REFRESH_INTERVAL_MS, serverTransport } from './tls.js';

/** A service to serve: its definition and a context-style implementation (see defineService). */
export interface ServiceRegistration {
  definition: ServiceDefinition;
  implementation: Record<string, unknown>;
}

/**
 * Pairs a service from @switchboard/contracts with its implementation, typed from the generated
 * Handlers type: `defineService('Llm', { Complete: async (req, ctx) => …, StreamComplete: … })`.
 */
export function defineService<N extends Exclude<keyof ServiceTypes, 'Health'>>(
  name: N,
  implementation: ContextImplementation<ServiceTypes[N]['handlers']>,
): ServiceRegistration {
  return { definition: contractServices[name].service, implementation };
}

export interface GrpcServerOptions {
  /** 0 = any free port; the bound one is in the result. */
  port: number;
  /** Default 0.0.0.0 (all IPv4 interfaces, as in a pod); tests use 127.0.0.1. */
  host?: string;
  logger: Logger;
  services: ServiceRegistration[];
  /**
   * Services whose implementation is given later, by addServices (built only once the port is
   * bound). Until then their calls are answered `unavailable`, which a caller's replica pool takes
   * as "this replica is not ready", where an unknown service would be UNIMPLEMENTED: a bug.
   */
  laterServices?: readonly Exclude<keyof ServiceTypes, 'Health'>[];
  /** Health at start, for every service and overall. Default NOT_SERVING: models load first. */
  initialStatus?: ReportedStatus;
  /** Extra grpc-js server options, over the defaults (keepalive, ping permits, connection age). */
  channelOptions?: ChannelOptions;
  /**
   * When set, every call of `services` must carry it (CLUSTER_SECRET_KEY metadata, as createClient
   * sends it) or is refused `unauthorized` before its handler runs. grpc.health.v1 stays open.
   */
  clusterSecret?: string;
  /** Serve over TLS (files re-read every tlsRefreshIntervalMs); unset = plaintext. */
  tls?: ServerTls | undefined;
  tlsRefreshIntervalMs?: number;
  /**
   * A second, plaintext port serving grpc.health.v1 only, with the same statuses: the kubelet's gRPC
   * probes cannot speak TLS. 0 = any free port; unset = none.
   */
  healthPort?: number | undefined;
}

export interface GrpcServer {
  readonly port: number;
  /** The plaintext health-only port actually bound, when one was asked for. */
  readonly healthPort: number | undefined;
  /** Flip SERVING / NOT_SERVING, per service (by full name) or all at once. */
  readonly health: HealthReporter;
  /** Calls its handlers have taken and not yet answered. */
  callsInFlight(): number;
  readonly server: Server;
  /**
   * Serves more services from now on, NOT_SERVING until set: for services that can only be built
   * once the port is bound (a worker that publishes its own address). Calls of a service named in
   * `laterServices` that come earlier are answered `unavailable`; of any other, UNIMPLEMENTED.
   */
  addServices(services: readonly ServiceRegistration[]): void;
  /** Stops taking calls, lets in-flight ones finish for up to graceMs, then cuts the rest. */
  shutdown(graceMs?: number): Promise<void>;
}

export async function startGrpcServer(options: GrpcServerOptions): Promise<GrpcServer> {
  const { host = '0.0.0.0', logger } = options;
  const server = new Server({
    ...serverKeepalive,
    ...serverConnectionAge,
    ...options.channelOptions,
    ...(options.clusterSecret === undefined
      ? {}
      : { interceptors: [clusterAuthInterceptor(options.clusterSecret, logger)] }),
  });
  const names = options.services.map((s) => serviceNameOf(s.definition));
  const health = new HealthReporter(names, options.initialStatus);
  server.addService(Health.service, health.handlers);
  const open = new OpenCalls();
  const wrap = ({ definition, implementation }: ServiceRegistration) =>
    wrapImplementation(definition, implementation, logger, open);
  options.services.forEach((service) => server.addService(service.definition, wrap(service)));
  const later = new Map(
    (options.laterServices ?? []).map((name) => {
      const slot = new LateService(contractServices[name].service, wrap);
      server.addService(slot.definition, slot.handlers);
      return [slot.definition, slot] as const;
    }),
  );
  const addServices = (services: readonly ServiceRegistration[]) => {
    for (const service of services) {
      const slot = later.get(service.definition);
      if (slot) slot.serve(service);
      else server.addService(service.definition, wrap(service));
      health.set(serviceNameOf(service.definition), 'NOT_SERVING');
    }
  };

  const transport = serverTransport(options.tls, options.tlsRefreshIntervalMs ?? TLS_REFRESH_INTERVAL_MS);
  await transport.ready;
  const port = await bind(server, host, options.port, transport.credentials);
  // Its own Server: a port of the same one would serve every service, and grpc-js cannot limit a
  // service to one port.
  const healthServer = options.healthPort === undefined ? undefined : new Server(serverKeepalive);
  healthServer?.addService(Health.service, health.handlers);
  const healthPort =
    healthServer === undefined
      ? undefined
      : await bind(healthServer, host, options.healthPort ?? 0, ServerCredentials.createInsecure()).catch(
          (error: unknown) => {
            server.forceShutdown();
            throw error;
          },
        );
  logger.info(
    {
      host,
      port,
      tls: options.tls !== undefined,
      mutual_tls: options.tls?.caFile !== undefined,
      health_port: healthPort,
      services: names,
    },
    'grpc server listening',
  );

  let shuttingDown: Promise<void> | undefined;
  const shutdown = (graceMs = 10_000): Promise<void> => {
    shuttingDown ??= drain(server, health, logger, graceMs).finally(() => healthServer?.forceShutdown());
    return shuttingDown;
  };
  return { port, healthPort, health, server, addServices, shutdown, callsInFlight: () => open.count };
}

function bind(server: Server, host: string, port: number, credentials: ServerCredentials): Promise<number> {
  const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return new Promise<number>((resolve, reject) => {
    server.bindAsync(address, credentials, (error, bound) => (error ? reject(error) : resolve(bound)));
  });
}

async function drain(server: Server, health: HealthReporter, logger: Logger, graceMs: number): Promise<void> {
  // NOT_SERVING first, so probes and watchers stop sending here while we finish what we have.
  health.close();
  logger.info({ graceMs }, 'grpc server draining');
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      logger.warn({ graceMs }, 'grpc server grace period over, cancelling calls still running');
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
  logger.info('grpc server stopped');
}
