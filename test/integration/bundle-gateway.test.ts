import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort, startNats, startRedis, type InfraHandle } from '@switchboard/devcluster';
import {
  dockerInstructions,
  assertDeployedContents,
  startBundled,
  runDockerDeploy,
  serviceDockerfile,
} from '../support/bundle.js';
import { repoRoot } from '../support/helm.js';

/**
 * The production install step of services/gateway/Dockerfile (`pnpm deploy --prod` of the gateway
 * alone), run here into a temp folder outside the workspace; the gateway is then started from that
 * folder, as the image's CMD starts it, against real NATS and Redis. If the image would miss a
 * file or a dependency, this fails.
 */

const dockerfilePath = serviceDockerfile('gateway');

describe('gateway image contents (pnpm deploy --prod, as the Dockerfile runs it)', () => {
  let work: string;
  let out: string;
  let nats: InfraHandle;
  let redis: InfraHandle;

  before(async () => {
    assert.ok(
      existsSync(join(repoRoot, 'services', 'gateway', 'dist', 'main.js')),
      'services/gateway is built (tsc -b services/gateway), as the Dockerfile builds it before deploying',
    );
    work = mkdtempSync(join(tmpdir(), 'sb-bundle-gateway-'));
    out = join(work, 'out');
    [nats, redis] = await Promise.all([startNats(), startRedis()]);
  });

  after(async () => {
    await Promise.all([nats?.stop(), redis?.stop()]);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('the Dockerfile is the one described: multi-stage, tini, non-root, the gateway ports', () => {
    const lines = dockerInstructions(dockerfilePath);
    const from = lines.filter((l) => l.startsWith('FROM'));
    assert.ok(from.length >= 2, 'multi-stage');
    assert.ok(lines.some((l) => l.startsWith('ARG NODE_IMAGE=node:20-bookworm-slim')));
    assert.ok(lines.some((l) => /pnpm install --frozen-lockfile/.test(l)));
    assert.ok(lines.some((l) => /ONNXRUNTIME_NODE_INSTALL=skip/.test(l)));
    assert.deepEqual(
      lines.filter((l) => l.startsWith('USER')),
      ['USER 10001:10001'],
    );
    assert.ok(lines.includes('ENTRYPOINT ["/usr/bin/tini", "--"]'));
    assert.ok(lines.includes('CMD ["node", "dist/main.js"]'));
    assert.ok(lines.includes('EXPOSE 8080 9464'));
  });

  test('pnpm deploy --prod of the gateway gives a self-contained folder without dev dependencies', () => {
    runDockerDeploy(dockerfilePath, out);

    assertDeployedContents(out, {
      libs: ['config', 'contracts', 'errors', 'grpc', 'keys', 'ratelimit', 'telemetry'],
      notShipped: ['typescript', '@types/express', '@switchboard/devcluster'],
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
        NATS_URL: nats.url,
        REDIS_URL: redis.url,
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
