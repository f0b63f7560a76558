import { Health, type HealthClient } from '@switchboard/contracts';
import { checkHealth, type HealthStatus } from '@switchboard/grpc';
import type { BrowserFleet } from '@switchboard/browser-registry';
import type { Logger } from '@switchboard/telemetry';
import { credentials } from '@grpc/grpc-js';
import { AnimationClient } from './animation.js';
import { BrowserClient } from './browser.js';
import { DiffusionClient } from './diffusion.js';
import { LlmClient } from './llm.js';
import { WhisperClient } from './whisper.js';
import type { WorkerEndpoint } from './worker-endpoint.js';

export type WorkerName = 'llm' | 'whisper' | 'diffusion' | 'animation' | 'browser';

export interface WorkerHealth {
  name: WorkerName;
  address: string;
  status: HealthStatus;
}

/** One client per worker, made once at start-up (DESIGN.md), plus their health. */
export interface WorkerClients {
  llm: LlmClient;
  whisper: WhisperClient;
  diffusion: DiffusionClient;
  animation: AnimationClient;
  browser: BrowserClient;
  health(): Promise<WorkerHealth[]>;
  close(): void;
}

export function createWorkerClients(
  endpoints: Readonly<Record<WorkerName, Readonly<Omit<WorkerEndpoint, 'clusterSecret'>>>>,
  logger: Logger,
  fleet: BrowserFleet,
  clusterSecret: string,
): WorkerClients {
  const at = (name: WorkerName): WorkerEndpoint => ({ ...endpoints[name], clusterSecret });
  const clients = {
    llm: new LlmClient(at('llm'), logger),
    whisper: new WhisperClient(at('whisper'), logger),
    diffusion: new DiffusionClient(at('diffusion'), logger),
    animation: new AnimationClient(at('animation'), logger),
    browser: new BrowserClient(at('browser'), logger, fleet),
  };
  const names = Object.keys(clients) as WorkerName[];
  const healthClients = new Map<WorkerName, HealthClient>(
    names.map((name) => [name, new Health(endpoints[name].address, credentials.createInsecure())]),
  );
  return {
    ...clients,
    async health() {
      return Promise.all(
        names.map(async (name) => ({
          name,
          address: endpoints[name].address,
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
