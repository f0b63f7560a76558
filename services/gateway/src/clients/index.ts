import { Health, type HealthClient } from '@switchboard/contracts';
import { checkHealth, type HealthStatus } from '@switchboard/grpc';
import type { BrowserFleet } from '@switchboard/browser-registry';
import type { Logger } from '@switchboard/telemetry';
import { credentials } from '@grpc/grpc-js';
import type { JobBoard } from '@switchboard/jobs';
import { AnimationJobs } from './animation.js';
import { SessionRouter } from '../sessions/session-router.js';
import { DiffusionWorker } from './diffusion.js';
import { LlmWorker } from './llm.js';
import { WhisperWorker } from './whisper.js';
import type { WorkerEndpoint } from './worker-endpoint.js';

export type WorkerName = 'llm' | 'whisper' | 'diffusion' | 'animation' | 'browser';

export interface WorkerHealth {
  name: WorkerName;
  address: string;
  status: HealthStatus;
}

/** One client per worker, made once at start-up (DESIGN.md), plus their health. */
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
  endpoints: Readonly<Record<CalledWorker, Readonly<Omit<WorkerEndpoint, 'clusterSecret'>>>>,
  /** Animation workers pull jobs; their address serves only the health view. */
  animation: { readonly address: string; readonly board: JobBoard },
  logger: Logger,
  fleet: BrowserFleet,
  clusterSecret: string,
): WorkerClients {
  const at = (name: CalledWorker): WorkerEndpoint => ({ ...endpoints[name], clusterSecret });
  const clients = {
    llm: new LlmWorker(at('llm'), logger),
    whisper: new WhisperWorker(at('whisper'), logger),
    diffusion: new DiffusionWorker(at('diffusion'), logger),
    browser: new SessionRouter(at('browser'), logger, fleet),
  };
  const addresses: Record<WorkerName, string> = {
    llm: endpoints.llm.address,
    whisper: endpoints.whisper.address,
    diffusion: endpoints.diffusion.address,
    animation: animation.address,
    browser: endpoints.browser.address,
  };
  const names = Object.keys(addresses) as WorkerName[];
  const healthClients = new Map<WorkerName, HealthClient>(
    names.map((name) => [name, new Health(addresses[name], credentials.createInsecure())]),
  );
  return {
    ...clients,
    animation: new AnimationJobs(animation.board),
    async health() {
      return Promise.all(
        names.map(async (name) => ({
          name,
          address: addresses[name],
          status: await checkHealth(healthClients.get(name)!, '', 1000),
        })),
      );
    },
    close() {
      const { browser, ...single } = clients;
      browser.closeChannels();
      for (const client of [...Object.values(single).map((c) => c.grpc), ...healthClients.values()])
        client.close();
    },
  };
}
