import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  connectionAllowed,
  deploymentOf,
  secretFiles,
  workerNames,
  type Container,
} from '../support/helm-checks.js';
import type { K8sObject } from '../support/helm.js';
import { refusalWithBrokers, renderWithBrokers } from '../support/render-matrix.js';

/**
 * The usage database through the chart (values.yaml: usageDatabase, networkPolicies.usageDatabase):
 * only the gateway gets its URL — as a mounted file when it carries credentials — and only the
 * gateway's egress opens to it, through the real helm binary.
 */

const everyComponent = Object.fromEntries(['gateway', ...workerNames].map((c) => [c, { enabled: true }]));
const fromSecret = { usageDatabase: { existingSecret: 'sb-usage-db', existingSecretKey: 'url' } };
const postgresLabels = { 'app.kubernetes.io/name': 'postgresql' };

const mainOf = (objects: K8sObject[], component: string): Container => {
  const deployment = deploymentOf(objects, component);
  assert.ok(deployment, `${component} is deployed`);
  return deployment.spec.template.spec.containers[0]!;
};
const envNames = (c: Container) => (c.env ?? []).map((e) => e.name);
const podLabelsOf = (objects: K8sObject[], component: string) =>
  deploymentOf(objects, component)!.spec.template.metadata.labels;

describe('the usage database in the chart', { timeout: 120_000 }, () => {
  test('the gateway gets the URL from a Secret as a file; no worker gets it at all', () => {
    const objects = renderWithBrokers(everyComponent, fromSecret);
    const gateway = mainOf(objects, 'gateway');
    assert.ok(!envNames(gateway).includes('USAGE_DATABASE_URL'), 'never a plain variable');
    const files = secretFiles(deploymentOf(objects, 'gateway')!.spec.template.spec, gateway);
    assert.deepEqual(
      { secret: files.USAGE_DATABASE_URL?.secret, key: files.USAGE_DATABASE_URL?.key },
      { secret: 'sb-usage-db', key: 'url' },
    );
    for (const worker of workerNames) {
      const names = envNames(mainOf(objects, worker));
      assert.ok(
        names.every((name) => !name.startsWith('USAGE_DATABASE')),
        `${worker} gets nothing of the usage database`,
      );
    }
  });

  test('a URL without credentials may be given as a value; one with credentials is refused', () => {
    const plain = mainOf(
      renderWithBrokers(everyComponent, { usageDatabase: { url: 'postgresql://pg.internal:5432/usage' } }),
      'gateway',
    );
    assert.deepEqual(
      (plain.env ?? []).filter((e) => e.name === 'USAGE_DATABASE_URL').map((e) => e.value),
      ['postgresql://pg.internal:5432/usage'],
    );
    assert.match(
      refusalWithBrokers(everyComponent, {
        usageDatabase: { url: 'postgresql://switchboard:hunter2@pg.internal:5432/usage' },
      }),
      /usageDatabase\.url: a URL with credentials belongs in a Secret/,
    );
    assert.match(
      refusalWithBrokers(everyComponent, { usageDatabase: { url: 'mysql://pg.internal/usage' } }),
      /usageDatabase/,
      'only postgres URLs',
    );
  });

  test("only the gateway's and the webhook sender's egress reach PostgreSQL's port", () => {
    const objects = renderWithBrokers(everyComponent, fromSecret, {
      networkPolicies: {
        usageDatabase: [
          {
            to: [{ podSelector: { matchLabels: postgresLabels } }],
            ports: [{ port: 5432, protocol: 'TCP' }],
          },
        ],
      },
    });
    const port = { number: 5432 };
    assert.equal(connectionAllowed(objects, podLabelsOf(objects, 'gateway'), postgresLabels, port), true);
    // The webhook sender keeps its tables there too unless webhookDatabase names another server
    // (test/integration/helm-webhooks.test.ts); no other worker reaches it.
    assert.equal(connectionAllowed(objects, podLabelsOf(objects, 'webhooks'), postgresLabels, port), true);
    for (const worker of workerNames.filter((w) => w !== 'webhooks')) {
      assert.equal(
        connectionAllowed(objects, podLabelsOf(objects, worker), postgresLabels, port),
        false,
        `${worker} cannot reach the usage database`,
      );
    }
  });
});
