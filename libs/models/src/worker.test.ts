// startModelWorker's handle: it serves at once, reports SERVING once the default model has loaded,
// and close() drains and frees the models; a start-up that fails closes what it had opened.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { checkHealth, waitForServing } from '@switchboard/grpc';
import { createLogger } from '@switchboard/telemetry';
import { startModelWorker, type ModelWorkerConfig, type ModelWorkerSpec } from './worker.js';

const logger = createLogger({ service: 'test', level: 'silent' });
let modelDir: string;

before(async () => {
  modelDir = await mkdtemp(join(tmpdir(), 'model-worker-'));
  await mkdir(join(modelDir, 'llm', 'tiny'), { recursive: true });
  await writeFile(join(modelDir, 'llm', 'tiny', 'config.json'), '{}');
});
after(() => rm(modelDir, { recursive: true, force: true }));

const config = (): ModelWorkerConfig => ({
  grpc: { port: 0, host: '127.0.0.1' },
  metricsPort: 0,
  clusterSecret: 'a-cluster-secret-long-enough-for-the-check',
  modelDir,
  loadingRetryAfterSeconds: 1,
  loadDelayMs: 0,
  shutdownGraceMs: 1_000,
});

function spec(disposed: string[], overrides: Partial<ModelWorkerSpec<string, never>> = {}) {
  return {
    name: 'llm',
    config: config(),
    createMetrics: () => ({ queueDepth: { set() {} }, running: { set() {} } }) as never,
    load: async (entry: { id: string }) => `handle of ${entry.id}`,
    dispose: async (handle: string) => void disposed.push(handle),
    services: () => [],
    ...overrides,
  } satisfies ModelWorkerSpec<string, never>;
}

test('the worker serves once its default model is loaded; close() drains and frees it', async () => {
  const disposed: string[] = [];
  const worker = await startModelWorker(spec(disposed), logger);
  const address = `127.0.0.1:${worker.port}`;
  assert.equal(await waitForServing(address, { timeoutMs: 10_000 }), 'SERVING');
  const metrics = await fetch(`http://127.0.0.1:${worker.metricsPort}/metrics`);
  assert.match(await metrics.text(), /llm_model_load_seconds\{model="tiny",status="ready"/);

  await Promise.all([worker.close(), worker.close()]);
  assert.deepEqual(disposed, ['handle of tiny']);
  assert.equal(await checkHealth(address, '', 1_000), 'UNREACHABLE');
});

test('switchboard_serving is 0 while the default model loads and 1 once it serves; dependencies are probed', async () => {
  let loaded!: () => void;
  const loading = new Promise<void>((resolve) => (loaded = resolve));
  const worker = await startModelWorker(
    spec([], {
      load: async (entry: { id: string }) => {
        await loading;
        return `handle of ${entry.id}`;
      },
      dependencies: [{ dependency: 's3', check: async () => undefined }],
    }),
    logger,
  );
  const scrape = async () => (await fetch(`http://127.0.0.1:${worker.metricsPort}/metrics`)).text();
  try {
    assert.match(await scrape(), /^switchboard_serving\{service="llm"\} 0$/m);
    loaded();
    assert.equal(await waitForServing(`127.0.0.1:${worker.port}`, { timeoutMs: 10_000 }), 'SERVING');
    const metrics = await scrape();
    assert.match(metrics, /^switchboard_serving\{service="llm"\} 1$/m);
    assert.match(metrics, /^switchboard_dependency_up\{[^}]*dependency="s3"[^}]*\} [01]$/m);
  } finally {
    loaded();
    await worker.close();
  }
});

test('a start-up that fails after listening closes the gRPC port again', async () => {
  const port = await freePort();
  // An invalid metrics port: the gRPC server is already listening when its listener fails.
  const failing = spec([], { config: { ...config(), grpc: { port, host: '127.0.0.1' }, metricsPort: -1 } });
  await assert.rejects(startModelWorker(failing, logger));
  assert.equal(await checkHealth(`127.0.0.1:${port}`, '', 1_000), 'UNREACHABLE');
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
