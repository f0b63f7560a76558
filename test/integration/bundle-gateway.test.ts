import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort, startNats, startRedis, type NatsHandle, type RedisHandle } from '@switchboard/devcluster';
import {
  assertDeployedContents,
  assertImageShape,
  dockerEnv,
  nodeImage,
  runDockerDeploy,
  startBundled,
} from '../support/bundle.js';
import { serviceImage } from '../support/dockerfile.js';
import { repoRoot } from '../support/helm.js';

/**
 * The production install step of the gateway image (deploy/docker/Dockerfile with SERVICE=gateway:
 * `pnpm deploy --prod` of the gateway alone), run here into a temp folder outside the workspace; the gateway is then started from that
 * folder, as the image's CMD starts it, against real NATS and Redis. If the image would miss a
 * file or a dependency, this fails.
 */

const image = serviceImage('gateway');

describe('gateway image contents (pnpm deploy --prod, as the image build runs it)', () => {
  let work: string;
  let out: string;
  let nats: NatsHandle;
  let redis: RedisHandle;

  before(async () => {
    assert.ok(
      existsSync(join(repoRoot, 'services', 'gateway', 'dist', 'main.js')),
      'services/gateway is built (tsc -b services/gateway), as the image build does before deploying',
    );
    work = mkdtempSync(join(tmpdir(), 'sb-bundle-gateway-'));
    out = join(work, 'out');
    [nats, redis] = await Promise.all([startNats(), startRedis()]);
  });

  after(async () => {
    await Promise.all([nats?.stop(), redis?.stop()]);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('the image is the one described: multi-stage, tini alone from apt, non-root, the gateway ports', () => {
    assertImageShape(image, { packages: [], exposed: [8080, 9464] });
    assert.equal(image.runtime.base, nodeImage);
    assert.equal(dockerEnv(image.build.lines).ONNXRUNTIME_NODE_INSTALL, 'skip');
    assert.deepEqual(
      Object.keys(dockerEnv(image.runtime.lines)).sort(),
      ['HOME', 'NODE_ENV'],
      'no worker variable (models, ffmpeg, Chromium, CUDA) on the gateway',
    );
  });

  test('pnpm deploy --prod of the gateway gives a self-contained folder without dev dependencies', () => {
    runDockerDeploy(image, out);

    assertDeployedContents(out, {
      libs: ['config', 'contracts', 'errors', 'grpc', 'keys', 'ratelimit', 'telemetry'],
      // No onnxruntime-node: the Dockerfile's CUDA build refuses the gateway.
      notShipped: ['typescript', '@types/express', '@switchboard/devcluster', 'onnxruntime-node'],
    });
  });

  test('the gateway starts from the deployed folder and reports healthy and ready', async (t) => {
    assert.ok(existsSync(join(out, 'dist', 'main.js')), 'the deploy test ran first');
    const port = await freePort();
    const metricsPort = await freePort();
    // As the image runs it: `node dist/main.js` from the app folder, a bare environment.
    const { child, output: logs } = startBundled(
      out,
      {
        GATEWAY_PORT: String(port),
        METRICS_PORT: String(metricsPort),
        ADMIN_TOKEN: 'bundle-test-admin-token-0123456789',
        KEY_PEPPER: 'bundle-test-key-pepper-0123456789abcdef',
        ...nats.env('gateway'),
        ...redis.env('gateway'),
        LOG_LEVEL: 'warn',
      },
      t,
    );

    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 20_000;
    let ready = false;
    while (!ready) {
      assert.equal(child.exitCode, null, `the gateway exited during start-up:\n${logs()}`);
      assert.ok(Date.now() < deadline, `the gateway was not ready in 20 s:\n${logs()}`);
      ready = await fetch(`${url}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (!ready) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
    assert.equal((await fetch(`${url}/readyz`)).status, 200);
    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /process_cpu_user_seconds_total/);

    // SIGTERM (what tini forwards) drains and exits cleanly.
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0, `exit after SIGTERM:\n${logs()}`);
  });
});
