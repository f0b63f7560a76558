import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  componentOf,
  connectionAllowed,
  deploymentOf,
  egressAllowsAddress,
  envNames,
  ofKind,
  policiesFor,
  secretFiles,
  workerNames,
  type Container,
} from '../support/helm-checks.js';
import type { K8sObject } from '../support/helm.js';
import { refusalWithBrokers, renderWithBrokers } from '../support/render-matrix.js';

/**
 * The webhook sender through the chart (values.yaml: webhooks, webhookDatabase, webhookSecretsKey,
 * networkPolicies), rendered by the real helm binary: the only pods with egress to the public
 * internet for tenants' URLs (the browser worker's own page egress aside), NATS and PostgreSQL
 * besides; the secrets key and a credentialed database URL only as files, on the gateway and the
 * sender alone; bad values refused.
 */

/** The workers besides the sender. */
const otherWorkers = workerNames.filter((w) => w !== 'webhooks');
const everyComponent = Object.fromEntries(['gateway', ...workerNames].map((c) => [c, { enabled: true }]));
const withWebhooks = { gateway: { enabled: true }, webhooks: { enabled: true } };
const postgresLabels = { 'app.kubernetes.io/name': 'postgresql' };
const natsLabels = { 'app.kubernetes.io/name': 'nats' };
const redisLabels = { 'app.kubernetes.io/name': 'redis' };
/** Infrastructure peers narrowed to their own pods, so a test can tell them apart. */
const narrowPeers = {
  networkPolicies: {
    clusterCIDRs: ['198.51.100.0/24'],
    nats: [{ to: [{ podSelector: { matchLabels: natsLabels } }], ports: [{ port: 4222, protocol: 'TCP' }] }],
    redis: [
      { to: [{ podSelector: { matchLabels: redisLabels } }], ports: [{ port: 6379, protocol: 'TCP' }] },
    ],
    usageDatabase: [
      { to: [{ podSelector: { matchLabels: postgresLabels } }], ports: [{ port: 5432, protocol: 'TCP' }] },
    ],
  },
};

const mainOf = (objects: K8sObject[], component: string): Container => {
  const deployment = deploymentOf(objects, component);
  assert.ok(deployment, `${component} is deployed`);
  return deployment.spec.template.spec.containers[0]!;
};
const podLabelsOf = (objects: K8sObject[], component: string) =>
  deploymentOf(objects, component)!.spec.template.metadata.labels;
const valueOf = (container: Container, name: string) =>
  (container.env ?? []).find((e) => e.name === name)?.value;
const filesOf = (objects: K8sObject[], component: string) =>
  secretFiles(deploymentOf(objects, component)!.spec.template.spec, mainOf(objects, component));
const generatedSecrets = (objects: K8sObject[]): { name: string; key: string; length: number }[] => {
  const job = ofKind(objects, 'Job').find(
    (j) => (j.metadata as { annotations?: Record<string, string> }).annotations?.['helm.sh/hook'],
  );
  const configMap = ofKind(objects, 'ConfigMap').find((c) => c.metadata.name === job?.metadata.name) as
    { data?: Record<string, string> } | undefined;
  const spec = configMap?.data?.['secrets.json'];
  return spec
    ? (JSON.parse(spec) as { secrets: { name: string; key: string; length: number }[] }).secrets
    : [];
};

describe('the webhook sender in the chart', { timeout: 180_000 }, () => {
  test('a Deployment and headless Service like the workers, gRPC health probes, its own NATS user', () => {
    const objects = renderWithBrokers(withWebhooks);
    const deployment = deploymentOf(objects, 'webhooks');
    assert.ok(deployment, 'webhooks is deployed');
    assert.equal((deployment.spec as { replicas?: number }).replicas, 2);
    const sender = mainOf(objects, 'webhooks');
    assert.match(sender.image, /\/switchboard\/webhooks:/);
    const probes = sender as Container & { readinessProbe?: { grpc?: { port: number } } };
    assert.equal(probes.readinessProbe?.grpc?.port, 50051);
    assert.equal(valueOf(sender, 'GRPC_PORT'), '50051');
    assert.equal(valueOf(sender, 'METRICS_PORT'), '9464');
    assert.equal(valueOf(sender, 'NATS_USER'), 'webhooks');
    assert.deepEqual(
      {
        secret: filesOf(objects, 'webhooks').NATS_PASSWORD?.secret,
        key: filesOf(objects, 'webhooks').NATS_PASSWORD?.key,
      },
      { secret: 'sb-nats-users', key: 'webhooks' },
    );
    const service = ofKind(objects, 'Service').find((s) => componentOf(s) === 'webhooks') as
      (K8sObject & { spec: { clusterIP?: string } }) | undefined;
    assert.equal(service?.spec.clusterIP, 'None');
    // Called by no one, calling no worker: no cluster secret, and the gateway gets no WEBHOOKS_ADDR.
    assert.equal(filesOf(objects, 'webhooks').CLUSTER_SECRET, undefined);
    assert.ok(!envNames(mainOf(objects, 'gateway')).includes('WEBHOOKS_ADDR'));
  });

  test("only the webhooks pods reach the internet (the browser's page egress aside); never the metadata service or the cluster's ranges", () => {
    const objects = renderWithBrokers(everyComponent, narrowPeers);
    const sender = policiesFor(objects, podLabelsOf(objects, 'webhooks'));
    for (const ip of ['93.184.216.34', '8.8.8.8', '1.1.1.1']) {
      assert.ok(egressAllowsAddress(sender, ip), `webhooks reaches ${ip}`);
    }
    for (const ip of [
      '169.254.169.254',
      '10.0.0.1',
      '172.16.0.1',
      '192.168.1.1',
      '100.64.0.1',
      '198.51.100.7',
    ]) {
      assert.ok(!egressAllowsAddress(sender, ip), `webhooks must not reach ${ip}`);
    }
    const v6 = ofKind<
      K8sObject & { spec: { egress?: { to?: { ipBlock?: { cidr: string; except?: string[] } }[] }[] } }
    >(sender, 'NetworkPolicy')
      .flatMap((p) => p.spec.egress ?? [])
      .flatMap((rule) => rule.to ?? [])
      .find((peer) => peer.ipBlock?.cidr === '::/0');
    assert.ok(v6, 'IPv6 internet too');
    for (const range of ['fc00::/7', 'fe80::/10']) assert.ok(v6.ipBlock!.except?.includes(range), range);

    for (const component of ['gateway', ...otherWorkers.filter((w) => w !== 'browser')]) {
      const applying = policiesFor(objects, podLabelsOf(objects, component));
      assert.ok(!egressAllowsAddress(applying, '93.184.216.34'), `${component} reaches the internet`);
      assert.ok(
        !egressAllowsAddress(applying, '169.254.169.254'),
        `${component} reaches the metadata service`,
      );
    }
  });

  test('webhooks.egressTo narrows the internet egress to those peers (an egress proxy)', () => {
    const objects = renderWithBrokers(withWebhooks, narrowPeers, {
      webhooks: { egressTo: [{ ipBlock: { cidr: '203.0.113.10/32' } }] },
    });
    const sender = policiesFor(objects, podLabelsOf(objects, 'webhooks'));
    assert.ok(egressAllowsAddress(sender, '203.0.113.10'));
    assert.ok(!egressAllowsAddress(sender, '93.184.216.34'));
  });

  test('webhooks pods reach NATS and PostgreSQL, not Redis nor any worker; nothing connects to them but the metrics scrape', () => {
    const objects = renderWithBrokers(everyComponent, narrowPeers);
    const sender = podLabelsOf(objects, 'webhooks');
    assert.equal(connectionAllowed(objects, sender, natsLabels, { number: 4222 }), true, 'NATS');
    assert.equal(connectionAllowed(objects, sender, postgresLabels, { number: 5432 }), true, 'PostgreSQL');
    assert.equal(connectionAllowed(objects, sender, redisLabels, { number: 6379 }), false, 'Redis');
    for (const worker of otherWorkers) {
      assert.equal(
        connectionAllowed(objects, sender, podLabelsOf(objects, worker), { name: 'grpc', number: 50051 }),
        false,
        `webhooks -> ${worker}`,
      );
    }
    for (const from of ['gateway', ...otherWorkers]) {
      assert.equal(
        connectionAllowed(objects, podLabelsOf(objects, from), sender, { name: 'grpc', number: 50051 }),
        false,
        `${from} -> webhooks`,
      );
    }
  });

  test('networkPolicies.webhookDatabase: the gateway and the sender reach that server instead', () => {
    const webhookDbLabels = { 'app.kubernetes.io/name': 'webhook-postgresql' };
    const objects = renderWithBrokers(withWebhooks, narrowPeers, {
      webhookDatabase: { url: 'postgresql://webhook-postgresql:5432/webhooks' },
      networkPolicies: {
        webhookDatabase: [
          {
            to: [{ podSelector: { matchLabels: webhookDbLabels } }],
            ports: [{ port: 5432, protocol: 'TCP' }],
          },
        ],
      },
    });
    for (const component of ['gateway', 'webhooks']) {
      const labels = podLabelsOf(objects, component);
      assert.equal(connectionAllowed(objects, labels, webhookDbLabels, { number: 5432 }), true, component);
      assert.equal(
        valueOf(mainOf(objects, component), 'WEBHOOK_DATABASE_URL'),
        'postgresql://webhook-postgresql:5432/webhooks',
      );
    }
    assert.equal(
      connectionAllowed(objects, podLabelsOf(objects, 'webhooks'), postgresLabels, { number: 5432 }),
      false,
      'the usage database is not the sender’s then',
    );
  });

  test('the secrets key and a credentialed URL reach the gateway and the sender only as files; no other pod gets anything of them', () => {
    const objects = renderWithBrokers(everyComponent, {
      usageDatabase: { existingSecret: 'sb-usage-db', existingSecretKey: 'url' },
    });
    for (const component of ['gateway', 'webhooks']) {
      const container = mainOf(objects, component);
      const names = envNames(container);
      assert.ok(!names.includes('WEBHOOK_SECRETS_KEY') && !names.includes('WEBHOOK_DATABASE_URL'), component);
      const files = filesOf(objects, component);
      assert.deepEqual(
        { secret: files.WEBHOOK_SECRETS_KEY?.secret, key: files.WEBHOOK_SECRETS_KEY?.key },
        { secret: 'sb-switchboard-webhook-secrets-key', key: 'key' },
        `${component}: the generated key`,
      );
      assert.ok(files.WEBHOOK_SECRETS_KEY!.readOnly, `${component}: read-only`);
      // webhookDatabase empty: usageDatabase's Secret.
      assert.deepEqual(
        { secret: files.WEBHOOK_DATABASE_URL?.secret, key: files.WEBHOOK_DATABASE_URL?.key },
        { secret: 'sb-usage-db', key: 'url' },
        `${component}: the usage database's URL, as a file`,
      );
    }
    assert.ok(
      !envNames(mainOf(objects, 'webhooks')).some((n) => n.startsWith('USAGE_DATABASE')),
      'the sender gets the URL under its own name',
    );
    for (const worker of otherWorkers) {
      const names = envNames(mainOf(objects, worker));
      assert.ok(
        names.every((n) => !n.startsWith('WEBHOOK_')),
        `${worker} gets nothing of webhooks`,
      );
    }
  });

  test("webhookSecretsKey.existingSecret and webhookDatabase.existingSecret are the operator's; nothing is generated for them", () => {
    const objects = renderWithBrokers(withWebhooks, {
      webhookSecretsKey: { existingSecret: 'sb-webhook-key', existingSecretKey: 'k' },
      webhookDatabase: { existingSecret: 'sb-webhook-db', existingSecretKey: 'dsn' },
    });
    for (const component of ['gateway', 'webhooks']) {
      const files = filesOf(objects, component);
      assert.deepEqual(
        [files.WEBHOOK_SECRETS_KEY?.secret, files.WEBHOOK_SECRETS_KEY?.key],
        ['sb-webhook-key', 'k'],
      );
      assert.deepEqual(
        [files.WEBHOOK_DATABASE_URL?.secret, files.WEBHOOK_DATABASE_URL?.key],
        ['sb-webhook-db', 'dsn'],
      );
    }
    assert.ok(!generatedSecrets(objects).some((s) => s.name.includes('webhook')));
  });

  test("a release of the sender alone (skaffold's modules) generates the shared key too, under the same name", () => {
    const alone = renderWithBrokers({ gateway: { enabled: false }, webhooks: { enabled: true } });
    assert.deepEqual(
      generatedSecrets(alone).filter((s) => s.name.includes('webhook')),
      [{ name: 'sb-switchboard-webhook-secrets-key', key: 'key', length: 64 }],
    );
    assert.equal(
      filesOf(alone, 'webhooks').WEBHOOK_SECRETS_KEY?.secret,
      'sb-switchboard-webhook-secrets-key',
    );
  });

  test('the metrics port is scraped like every worker’s; KEDA scales on the pending deliveries', () => {
    const objects = renderWithBrokers(withWebhooks, {
      metrics: { serviceMonitor: { enabled: true } },
      keda: { enabled: true },
    });
    const monitor = ofKind(objects, 'ServiceMonitor').find((m) => componentOf(m) === 'webhooks');
    assert.ok(monitor, 'a ServiceMonitor for webhooks');
    const scaled = ofKind<
      K8sObject & { spec: { triggers: { type: string; metadata: { query?: string } }[] } }
    >(objects, 'ScaledObject').find((o) => componentOf(o) === 'webhooks');
    assert.ok(scaled, 'a ScaledObject for webhooks');
    assert.equal(scaled.spec.triggers[0]?.type, 'prometheus');
    assert.match(scaled.spec.triggers[0]?.metadata.query ?? '', /webhooks_pending\{[^}]*service="webhooks"/);
  });

  const rejected: [string, object, RegExp][] = [
    ['a negative replica count', { webhooks: { replicas: -1 } }, /webhooks/],
    [
      'a non-PostgreSQL webhook database',
      { webhookDatabase: { url: 'mysql://db/webhooks' } },
      /webhookDatabase/,
    ],
    [
      'a webhook database URL with credentials',
      { webhookDatabase: { url: 'postgresql://u:hunter2@db:5432/webhooks' } },
      /webhookDatabase\.url: a URL with credentials belongs in a Secret/,
    ],
    [
      'the usage database URL with credentials, which the sender would get',
      { gateway: { enabled: false }, usageDatabase: { url: 'postgresql://u:hunter2@db:5432/usage' } },
      /usageDatabase\.url/,
    ],
    [
      'no secrets key and no generated one',
      { webhookSecretsKey: { create: false } },
      /webhookSecretsKey: set existingSecret, or create: true/,
    ],
    [
      'the secrets key in env',
      { webhooks: { env: { WEBHOOK_SECRETS_KEY: 'x'.repeat(40) } } },
      /webhookSecretsKey/,
    ],
    [
      'the database URL in env',
      { webhooks: { env: { WEBHOOK_DATABASE_URL: 'postgresql://db/webhooks' } } },
      /WEBHOOK_DATABASE_URL comes from a Secret/,
    ],
    ['egressTo on another worker', { llm: { enabled: true, egressTo: [] } }, /egressTo/],
    ['an unknown key', { webhooks: { concurrency: 64 } }, /concurrency/],
  ];
  for (const [what, values, message] of rejected) {
    test(`helm template refuses ${what}`, () => {
      assert.match(refusalWithBrokers(withWebhooks, values), message);
    });
  }
});
