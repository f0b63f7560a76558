import { Health, type HealthClient } from '@switchboard/contracts';
import { ReplicaPool, type HealthStatus, type ReplicaInfo } from '@switchboard/grpc';
import type { BrowserFleet } from '@switchboard/browser-registry';
import type { Logger } from '@switchboard/telemetry';
import type { JobBoard } from '@switchboard/jobs';
import { AnimationJobs } from './animation.js';
import { SessionRouter } from './session-router.js';
import { DiffusionWorker } from './diffusion.js';
import { LlmWorker } from './llm.js';
import { WhisperWorker } from './whisper.js';
import {
  defaultRouting,
  type WorkerAccess,
  type WorkerEndpoint,
  type WorkerRouting,
} from './worker-endpoint.js';

export type WorkerName = 'llm' | 'whisper' | 'diffusion' | 'animation' | 'browser';

/** One replica as the admin status lists it. */
export interface ReplicaHealth {
  address: string;
  /** Its health watch's last answer; a replica not heard from yet (just resolved) is UNREACHABLE. */
  status: 'SERVING' | 'NOT_SERVING' | 'UNREACHABLE';
  in_flight: number;
  served: number;
}

export interface WorkerHealth {
  name: WorkerName;
  address: string;
  status: HealthStatus;
  /**
   * The replicas this gateway routes calls over (llm, whisper, diffusion). Empty for browser and
   * animation: sessions go to the worker the registry names and animation workers pull their jobs,
   * so this gateway holds no per-replica counts for them.
   */
  replicas: ReplicaHealth[];
}

/** One client per worker, made once at start-up and shared by every request, plus their health. */
export interface WorkerClients {
  llm: LlmWorker;
  whisper: WhisperWorker;
  diffusion: DiffusionWorker;
  animation: AnimationJobs;
  /** Browser calls go through the session router (placement, ownership, stickiness). */
  browser: SessionRouter;
  health(): Promise<WorkerHealth[]>;
  close(): void;
}

type CalledWorker = Exclude<WorkerName, 'animation'>;

export function createWorkerClients(
  endpoints: Readonly<Record<CalledWorker, Readonly<Omit<WorkerEndpoint, keyof WorkerAccess>>>>,
  /** Animation workers pull jobs; their address serves only the health view. */
  animation: { readonly address: string; readonly board: JobBoard },
  logger: Logger,
  fleet: BrowserFleet,
  /** The cluster secret and TLS transport every call to every worker uses. */
  access: WorkerAccess,
  /**
   * How worker names become replicas: the model workers' calls spread over them, the browser's
   * new sessions before any worker announced itself and every health check resolve through it.
   */
  routing: WorkerRouting = defaultRouting,
): WorkerClients {
  const at = (name: CalledWorker): WorkerEndpoint => ({ ...endpoints[name], ...access });
  const clients = {
    llm: new LlmWorker(at('llm'), logger, routing),
    whisper: new WhisperWorker(at('whisper'), logger, routing),
    diffusion: new DiffusionWorker(at('diffusion'), logger, routing),
    browser: new SessionRouter(at('browser'), logger, fleet, routing),
  };
  const pooled = { llm: clients.llm, whisper: clients.whisper, diffusion: clients.diffusion };
  const addresses: Record<WorkerName, string> = {
    llm: endpoints.llm.address,
    whisper: endpoints.whisper.address,
    diffusion: endpoints.diffusion.address,
    animation: animation.address,
    browser: endpoints.browser.address,
  };
  const names = Object.keys(addresses) as WorkerName[];
  // Health only, resolved as the others are: in the local runner's replica mode the animation
  // worker's name is known to WORKER_DNS_SERVER alone.
  const animationHealth = new ReplicaPool<HealthClient>(Health, animation.address, {
    deadlineMs: 1_000,
    maxAttempts: 1,
    transport: access.transport,
    dnsServer: routing.dnsServer,
    resolveIntervalMs: routing.resolveIntervalMs,
  });
  const pools: Record<WorkerName, Pick<ReplicaPool<never>, 'checkHealth' | 'replicas'>> = {
    llm: clients.llm.pool,
    whisper: clients.whisper.pool,
    diffusion: clients.diffusion.pool,
    animation: animationHealth,
    browser: clients.browser.fallback,
  };
  return {
    ...clients,
    animation: new AnimationJobs(animation.board),
    async health() {
      return Promise.all(
        names.map(async (name) => ({
          name,
          address: addresses[name],
          status: await pools[name].checkHealth(1000),
          replicas: name in pooled ? pools[name].replicas().map(replicaHealth) : [],
        })),
      );
    },
    close() {
      clients.browser.closeChannels();
      for (const worker of Object.values(pooled)) worker.close();
      animationHealth.close();
    },
  };
}

function replicaHealth(replica: ReplicaInfo): ReplicaHealth {
  return { ...replica, status: replica.status === 'UNKNOWN' ? 'UNREACHABLE' : replica.status };
}
