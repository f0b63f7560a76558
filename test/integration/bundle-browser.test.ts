import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort, startNats, type NatsHandle } from '@switchboard/devcluster';
import { chromiumPids } from '../support/browser-stack.js';
import {
  assertDeployedContents,
  assertImageShape,
  dockerEnv,
  runDockerDeploy,
  startBundledWorker,
} from '../support/bundle.js';
import { dockerInstructions, serviceImage } from '../support/dockerfile.js';
import { testClusterSecret } from '../support/gateway.js';
import { serviceConfig } from '../support/helm-checks.js';

/**
 * The production install step of the browser image (deploy/docker/Dockerfile with SERVICE=browser:
 * `pnpm deploy --prod` of the browser worker alone), run here into a temp folder outside the workspace; the worker is then started
 * from that folder, as the image's CMD starts it, against a real NATS and the image's Chromium
 * path (Debian's `chromium`, installed here too). It must launch and connect its warm browser and
 * report SERVING, and leave no Chromium behind after SIGTERM. If the image would miss a file or a
 * dependency (playwright-core, the registry, the DevTools relay), this fails.
 */

const image = serviceImage('browser');

describe('browser worker image contents (pnpm deploy --prod, as the image build runs it)', () => {
  let work: string;
  let out: string;
  let nats: NatsHandle;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'sb-bundle-browser-'));
    out = join(work, 'out');
    nats = await startNats();
  });

  after(async () => {
    await nats?.stop();
    if (work) rmSync(work, { recursive: true, force: true, maxRetries: 5 });
  });

  test('the image: the worker image shape, Debian Chromium and fonts, the worker ports', async () => {
    const config = await serviceConfig('browser');
    assert.ok(config?.load, 'services/browser exports loadBrowserConfig');
    const defaults = config.load({ CLUSTER_SECRET: testClusterSecret }) as {
      grpc: { port: number };
      devtools: { port: number };
      metricsPort: number;
      chromiumPath: string;
      chromiumPolicyDir: string;
    };
    assertImageShape(image, {
      packages: ['chromium', 'fonts-liberation'],
      exposed: [defaults.grpc.port, defaults.devtools.port, defaults.metricsPort],
    });
    const env = dockerEnv(image.runtime.lines);
    assert.equal(env.CHROMIUM_PATH, defaults.chromiumPath);
    assert.equal(env.CHROMIUM_PATH, '/usr/bin/chromium', "where Debian's chromium package puts it");
    assert.match(env.BROWSER_PROFILE_ROOT ?? '', /^\/tmp(\/|$)/, 'profiles on the /tmp volume');
    assert.ok(
      !dockerInstructions().some((l) => /playwright(-core)? install/.test(l)),
      'no browser build downloaded',
    );
    assert.equal(dockerEnv(image.build.lines).PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD, '1');
    // The managed policy the worker refuses to start without, where its Chromium reads it.
    assert.ok(
      image.runtime.lines.includes(
        `COPY services/browser/policy/switchboard.json ${defaults.chromiumPolicyDir}/switchboard.json`,
      ),
      'the shipped policy is installed',
    );
  });

  test('pnpm deploy --prod of the browser worker gives a self-contained folder without dev dependencies', () => {
    const args = runDockerDeploy(image, out);
    assert.ok(args.includes('{services/browser}'), `deploys the browser worker: pnpm ${args.join(' ')}`);
    assertDeployedContents(out, {
      libs: [
        'browser-registry',
        'config',
        'contracts',
        'errors',
        'events',
        'grpc',
        'objectstore',
        'telemetry',
      ],
      shipped: ['playwright-core', 'nats', 'ws', 'prom-client', 'zod'],
      // No onnxruntime-node: the Dockerfile's CUDA build refuses the browser worker.
      notShipped: ['typescript', '@switchboard/devcluster', '@types/ws', 'onnxruntime-node'],
    });
  });

  test('the worker starts from the deployed folder, launches its warm Chromium, reports SERVING and stops cleanly', async (t) => {
    const imageEnv = dockerEnv(image.runtime.lines);
    // The image's HOME and profile root are its /tmp volume; here, folders of this test's own.
    const home = join(work, 'tmp');
    const profileRoot = join(home, 'profiles');
    mkdirSync(profileRoot, { recursive: true });
    // Run as root, the worker starts Chromium as a user of its own, which must reach its profiles.
    chmodSync(work, 0o711);
    chmodSync(home, 0o711);
    const worker = await startBundledWorker(
      out,
      {
        ...nats.env('browser'),
        CHROMIUM_PATH: imageEnv.CHROMIUM_PATH!,
        HOME: home,
        BROWSER_PROFILE_ROOT: profileRoot,
        BROWSER_POOL_SIZE: '1',
        DEVTOOLS_PORT: String(await freePort()),
        DEVTOOLS_HOST: '127.0.0.1',
        OBJECT_STORE_DIR: join(home, 'objects'),
      },
      t,
    );

    const metrics = await worker.metrics();
    assert.match(metrics, /process_cpu_user_seconds_total/);
    assert.match(metrics, /^browser_pool_warm_browsers\{service="browser"\} 1$/m, 'one warm browser');
    assert.match(metrics, /^browser_active_sessions\{service="browser"\} 0$/m);
    assert.ok((await chromiumPids(profileRoot)).length > 0, 'the warm Chromium runs from the profile root');
    assert.ok(readdirSync(profileRoot).length > 0, 'with its own profile directory');

    // SIGTERM (what tini forwards) closes the pool and exits cleanly, leaving no Chromium behind.
    assert.equal(await worker.terminate(), 0, `exit after SIGTERM:\n${worker.output()}`);
    const deadline = Date.now() + 5_000;
    while ((await chromiumPids(profileRoot)).length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(await chromiumPids(profileRoot), [], 'no Chromium process left');
  });
});
