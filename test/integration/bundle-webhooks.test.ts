import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connect } from 'nats';
import { startNats, type NatsHandle } from '@switchboard/devcluster';
import {
  assertDeployedContents,
  assertImageShape,
  dockerEnv,
  runDockerDeploy,
  startBundledWorker,
} from '../support/bundle.js';
import { serviceImage } from '../support/dockerfile.js';
import { serviceConfig } from '../support/helm-checks.js';
import { testUsageDatabase } from '../support/usage-database.js';

/**
 * The production install step of the webhook sender's image (deploy/docker/Dockerfile with
 * SERVICE=webhooks: `pnpm deploy --prod` of services/webhooks, the package
 * @switchboard/webhooks-sender, selected by its folder since the library @switchboard/webhooks has
 * the folder's name), run here into a temp folder outside the workspace; the sender is then started
 * from that folder, as the image's CMD starts it, against a real NATS with JetStream (as its own
 * user) and a real PostgreSQL. It must report SERVING, leave the events stream and its durable
 * consumer in NATS, export its metrics and exit cleanly on SIGTERM. A file or dependency the image
 * would miss (the address guard, the store, the NATS or PostgreSQL client) fails here.
 */

const image = serviceImage('webhooks');
const secretsKey = 'bundle-test-webhook-secrets-key-0123456789';

async function senderDefaults(): Promise<{ grpc: { port: number }; metricsPort: number }> {
  const config = await serviceConfig('webhooks');
  assert.ok(config?.load, 'services/webhooks exports loadWebhooksConfig');
  return config.load({ WEBHOOK_SECRETS_KEY: secretsKey }) as { grpc: { port: number }; metricsPort: number };
}

describe('webhook sender image contents (pnpm deploy --prod, as the image build runs it)', () => {
  let work: string;
  let out: string;
  let nats: NatsHandle;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'sb-bundle-webhooks-'));
    out = join(work, 'out');
    nats = await startNats();
  });

  after(async () => {
    await nats?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('the image: no system package but tini, nothing downloaded, uid 10001, its gRPC (health) and metrics ports', async () => {
    const defaults = await senderDefaults();
    assertImageShape(image, { packages: [], exposed: [defaults.grpc.port, defaults.metricsPort] });
    assert.equal(dockerEnv(image.runtime.lines).MODEL_DIR, undefined, 'no models');
  });

  test('pnpm deploy --prod of services/webhooks gives a self-contained folder of the sender, without dev dependencies', () => {
    const args = runDockerDeploy(image, out);
    assert.ok(
      args.includes('{services/webhooks}'),
      `deploys the sender by its folder: pnpm ${args.join(' ')}`,
    );
    assertDeployedContents(out, {
      libs: ['address-guard', 'broker-auth', 'config', 'errors', 'events', 'grpc', 'telemetry', 'webhooks'],
      shipped: ['nats', 'prom-client', 'zod'],
      notShipped: ['typescript', '@switchboard/devcluster', 'onnxruntime-node'],
    });
  });

  test('the sender starts from the deployed folder, sets up its JetStream consumer, reports SERVING and stops cleanly', async (t) => {
    const sender = await startBundledWorker(
      out,
      {
        ...nats.env('webhooks'),
        WEBHOOK_DATABASE_URL: await testUsageDatabase(),
        WEBHOOK_SECRETS_KEY: secretsKey,
      },
      t,
    );

    const nc = await connect(nats.connectOptions('operator'));
    t.after(() => nc.close());
    const jsm = await nc.jetstreamManager();
    const stream = await jsm.streams.info('SWITCHBOARD_EVENTS');
    assert.deepEqual(stream.config.subjects, ['switchboard.events.>']);
    assert.equal(
      (await jsm.consumers.info('SWITCHBOARD_EVENTS', 'webhooks')).config.durable_name,
      'webhooks',
    );

    const metrics = await sender.metrics();
    assert.match(metrics, /^process_cpu_user_seconds_total\{service="webhooks"\} /m);

    // SIGTERM (what tini forwards) gives the deliveries back and exits cleanly.
    assert.equal(await sender.terminate(), 0, `exit after SIGTERM:\n${sender.output()}`);
  });
});
