import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  allContainers,
  componentOf,
  connectionAllowed,
  deploymentOf,
  envNames,
  k8sProblems,
  ofKind,
  policiesFor,
  selects,
  serviceConfig,
  workerNames,
  type Container,
  type DeploymentObject,
  type PodSpec,
} from '../support/helm-checks.js';
import {
  chartDir,
  helm,
  helmLint as lintChart,
  helmTemplate as renderChart,
  kubeVersion,
  type K8sObject,
} from '../support/helm.js';
import {
  brokerCredentials,
  refusalWithBrokers,
  renderMatrix,
  renderWithBrokers,
} from '../support/render-matrix.js';
import { type ModelStack, startLlmStack } from '../support/stack.js';

/**
 * What operators add to the chart's pods without forking it (values.yaml: podLabels,
 * priorityClassName, topologySpreadConstraints, serviceAccount, extraEnv, envFrom, extraVolumes,
 * extraVolumeMounts, initContainers, sidecars), the drain-safe PodDisruptionBudgets, DNS egress,
 * TLS on the gateway -> worker gRPC hop, the `helm test` pod, and fully qualified image names,
 * through the real helm binary.
 */

const components = ['gateway', ...workerNames] as const;
const everyComponent = Object.fromEntries(components.map((c) => [c, { enabled: true }]));

const render = renderWithBrokers;
const failure = refusalWithBrokers;
const lint = (...values: object[]) => lintChart({ defaults: [brokerCredentials], values });

const podOf = (objects: K8sObject[], component: string): PodSpec => {
  const deployment = deploymentOf(objects, component);
  assert.ok(deployment, `${component} is deployed`);
  return deployment.spec.template.spec;
};
const mainOf = (objects: K8sObject[], component: string): Container =>
  podOf(objects, component).containers[0]!;
const templateOf = (objects: K8sObject[], component: string) =>
  deploymentOf(objects, component)!.spec.template;

interface PodExtras {
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  priorityClassName?: string;
  topologySpreadConstraints?: {
    maxSkew: number;
    topologyKey: string;
    whenUnsatisfiable: string;
    labelSelector?: { matchLabels?: Record<string, string> };
  }[];
}
const extrasOf = (objects: K8sObject[], component: string) =>
  podOf(objects, component) as PodSpec & PodExtras;
/** The ServiceAccounts made for Switchboard's components (serviceAccount.create), not the chart's own jobs'. */
const componentAccounts = (objects: K8sObject[]) =>
  ofKind(objects, 'ServiceAccount').filter((a) =>
    (components as readonly string[]).includes(componentOf(a) ?? ''),
  );

/** Every extension point set on a component, named after it so each value can be traced back. */
function extensionsFor(component: string) {
  return {
    podLabels: { 'example.com/team': `team-${component}` },
    priorityClassName: `priority-${component}`,
    serviceAccount: {
      create: true,
      annotations: { 'eks.amazonaws.com/role-arn': `arn:aws:iam::111122223333:role/${component}` },
    },
    extraEnv: [
      { name: 'EXTRA_PLAIN', value: component },
      {
        name: 'EXTRA_FROM_SECRET',
        valueFrom: { secretKeyRef: { name: `${component}-vendor`, key: 'token' } },
      },
    ],
    envFrom: [{ configMapRef: { name: `${component}-settings` } }],
    extraVolumes: [{ name: 'extra-ca', configMap: { name: `${component}-ca` } }],
    extraVolumeMounts: [{ name: 'extra-ca', mountPath: '/etc/extra-ca', readOnly: true }],
    initContainers: [{ name: 'extra-init', image: 'registry.example.com/tools/wait:1.0' }],
    sidecars: [{ name: 'extra-sidecar', image: 'registry.example.com/tools/proxy:1.0' }],
  };
}
const allExtensions = Object.fromEntries(components.map((c) => [c, extensionsFor(c)]));

describe('chart extension points: values.schema.json', () => {
  test('accepts every extension point on every component; the render validates against the Kubernetes schemas', () => {
    const result = lint(everyComponent, allExtensions);
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.deepEqual(render(everyComponent, allExtensions).flatMap(k8sProblems), []);
  });

  const rejected: [string, object, RegExp][] = [
    ['an unknown key beside them', { gateway: { podLabelz: {} } }, /podLabelz/],
    ['an unknown serviceAccount key', { llm: { serviceAccount: { create: true, role: 'x' } } }, /role/],
    ['a priorityClassName that is no name', { whisper: { priorityClassName: 5 } }, /priorityClassName/],
    [
      'a spread constraint without topologyKey',
      { gateway: { topologySpreadConstraints: [{ maxSkew: 1, whenUnsatisfiable: 'ScheduleAnyway' }] } },
      /topologyKey/,
    ],
    [
      'a spread constraint that is neither hard nor soft',
      {
        browser: {
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'Sometimes' }],
        },
      },
      /whenUnsatisfiable/,
    ],
    ['an extraEnv entry without a name', { diffusion: { extraEnv: [{ value: 'x' }] } }, /name/],
    ['a sidecar without an image', { animation: { sidecars: [{ name: 'proxy' }] } }, /image/],
    ['a pod label value that is not a string', { gateway: { podLabels: { team: 7 } } }, /podLabels/],
    [
      'a mount path that is not absolute',
      { llm: { extraVolumeMounts: [{ name: 'x', mountPath: 'etc' }] } },
      /mountPath/,
    ],
    [
      'a PDB that lets no pod go',
      { gateway: { podDisruptionBudget: { enabled: true, maxUnavailable: 0 } } },
      /maxUnavailable/,
    ],
    ['grpcTls without its server Secret', { grpcTls: { enabled: true } }, /serverSecret/],
    ['a gRPC health port on the gRPC port', { grpcTls: { healthPort: 50051 } }, /healthPort/],
    ['DNS as a bare peer list (the old form)', { networkPolicies: { dns: [{ podSelector: {} }] } }, /dns/],
    ['a DNS port without its protocol', { networkPolicies: { dns: { ports: [{ port: 53 }] } } }, /protocol/],
    [
      'a node-local DNS address that is no address',
      { networkPolicies: { dns: { nodeLocalAddresses: ['dns.local'] } } },
      /nodeLocalAddresses/,
    ],
    [
      'an image registry with a scheme',
      { global: { imageRegistry: 'https://ghcr.io/acme' } },
      /imageRegistry/,
    ],
    ['an unknown tests key', { tests: { image: 'x' } }, /image/],
  ];
  for (const [what, values, message] of rejected) {
    test(`rejects ${what}`, () => {
      assert.match(failure(values), message);
      assert.notEqual(lint(values).status, 0, 'helm lint --strict fails too');
    });
  }
});

test('helm lint --strict passes on every render of the matrix (values files, skaffold modules)', () => {
  for (const entry of renderMatrix()) {
    const result = lintChart(entry.options);
    assert.equal(result.status, 0, `${entry.name}:\n${result.stdout}\n${result.stderr}`);
  }
});

describe('chart extension points: pods', () => {
  let objects: K8sObject[];
  before(() => {
    objects = render(everyComponent, allExtensions);
  });

  test('podLabels reach every pod template; the chart labels stay, and selectors still select the pods', () => {
    const hijacked = render(everyComponent, {
      gateway: { podLabels: { 'app.kubernetes.io/component': 'other', 'example.com/team': 'edge' } },
    });
    const labels = templateOf(hijacked, 'gateway').metadata.labels;
    assert.equal(labels['app.kubernetes.io/component'], 'gateway', 'a chart label wins over podLabels');
    assert.equal(labels['example.com/team'], 'edge');
    for (const component of components) {
      const deployment = deploymentOf(objects, component)!;
      const podLabels = deployment.spec.template.metadata.labels;
      assert.equal(podLabels['example.com/team'], `team-${component}`, component);
      assert.ok(selects(deployment.spec.selector.matchLabels, podLabels), `${component}: selector`);
      const service = ofKind(objects, 'Service').find((s) => componentOf(s) === component)!;
      assert.ok(selects((service.spec as { selector: Record<string, string> }).selector, podLabels));
    }
  });

  test("podAnnotations: an operator's prometheus.io key replaces the chart's, rendered once", () => {
    const values = {
      gateway: { podAnnotations: { 'prometheus.io/scrape': 'false', 'sidecar.istio.io/inject': 'true' } },
      llm: { enabled: true, podAnnotations: { 'prometheus.io/port': '9999' } },
    };
    const result = helm([
      'template',
      'sb',
      chartDir,
      '--kube-version',
      kubeVersion,
      '--set',
      'nats.auth.existingSecret=n',
      '--set',
      'redis.auth.existingSecret=r',
      '--set-json',
      `gateway=${JSON.stringify(values.gateway)}`,
      '--set-json',
      `llm=${JSON.stringify(values.llm)}`,
    ]);
    assert.equal(result.status, 0, result.stderr);
    // Duplicate keys are what broke strict YAML parsers: count them in the text itself.
    assert.equal(
      result.stdout.match(/prometheus\.io\/scrape:/g)?.length,
      2,
      'one scrape key per pod template',
    );
    assert.equal(result.stdout.match(/prometheus\.io\/port:/g)?.length, 2, 'one port key per pod template');
    const rendered = render(values);
    const annotations = (c: string) =>
      (templateOf(rendered, c).metadata as { annotations?: Record<string, string> }).annotations;
    assert.deepEqual(annotations('gateway'), {
      'prometheus.io/port': '9464',
      'prometheus.io/scrape': 'false',
      'sidecar.istio.io/inject': 'true',
    });
    assert.deepEqual(annotations('llm'), { 'prometheus.io/port': '9999', 'prometheus.io/scrape': 'true' });
  });

  test('priorityClassName on every component; none by default', () => {
    for (const component of components) {
      assert.equal(extrasOf(objects, component).priorityClassName, `priority-${component}`);
    }
    const plain = render(everyComponent);
    for (const component of components) assert.equal(extrasOf(plain, component).priorityClassName, undefined);
  });

  test('topology spread: soft zone and node spread of the gateway, browser and webhook sender by default, over their own pods', () => {
    const plain = render(everyComponent);
    for (const component of components) {
      const constraints = extrasOf(plain, component).topologySpreadConstraints;
      if (!['gateway', 'browser', 'webhooks'].includes(component)) {
        assert.equal(constraints, undefined, `${component}: none by default`);
        continue;
      }
      const selector = deploymentOf(plain, component)!.spec.selector.matchLabels;
      assert.deepEqual(constraints, [
        {
          maxSkew: 1,
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: selector },
        },
        {
          maxSkew: 1,
          topologyKey: 'kubernetes.io/hostname',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: selector },
        },
      ]);
    }
  });

  test("topology spread: an operator's list replaces the default; its own labelSelector is kept; [] turns it off", () => {
    const hard = {
      maxSkew: 1,
      topologyKey: 'topology.kubernetes.io/zone',
      whenUnsatisfiable: 'DoNotSchedule',
    };
    const own = {
      ...hard,
      topologyKey: 'kubernetes.io/hostname',
      labelSelector: { matchLabels: { tier: 'gpu' } },
    };
    const rendered = render(everyComponent, {
      gateway: { topologySpreadConstraints: [hard] },
      llm: { topologySpreadConstraints: [own] },
      browser: { topologySpreadConstraints: [] },
    });
    const selector = deploymentOf(rendered, 'gateway')!.spec.selector.matchLabels;
    assert.deepEqual(extrasOf(rendered, 'gateway').topologySpreadConstraints, [
      { ...hard, labelSelector: { matchLabels: selector } },
    ]);
    assert.deepEqual(extrasOf(rendered, 'llm').topologySpreadConstraints, [own]);
    assert.equal(extrasOf(rendered, 'browser').topologySpreadConstraints, undefined);
  });

  test('serviceAccount.create: an account per component with its annotations, used by its pods, no API token', () => {
    const accounts = componentAccounts(objects);
    for (const component of components) {
      const pod = extrasOf(objects, component);
      const account = accounts.find((a) => a.metadata.name === pod.serviceAccountName);
      assert.ok(account, `${component}: its ServiceAccount ${pod.serviceAccountName} is rendered`);
      assert.equal(componentOf(account), component);
      assert.deepEqual((account.metadata as { annotations?: object }).annotations, {
        'eks.amazonaws.com/role-arn': `arn:aws:iam::111122223333:role/${component}`,
      });
      assert.equal(
        (account as { automountServiceAccountToken?: boolean }).automountServiceAccountToken,
        false,
      );
      assert.equal(pod.automountServiceAccountToken, false, `${component}: no API token mounted`);
    }
  });

  test('serviceAccount without create names an existing account; by default the namespace default, no token', () => {
    const named = render(everyComponent, {
      gateway: { serviceAccount: { name: 'shared-s3' } },
      llm: { serviceAccount: { name: 'shared-s3', automountServiceAccountToken: true } },
    });
    assert.deepEqual(componentAccounts(named), []);
    assert.equal(extrasOf(named, 'gateway').serviceAccountName, 'shared-s3');
    assert.equal(extrasOf(named, 'llm').automountServiceAccountToken, true);
    const plain = render(everyComponent);
    for (const component of components) {
      assert.equal(extrasOf(plain, component).serviceAccountName, undefined);
      assert.equal(extrasOf(plain, component).automountServiceAccountToken, false);
    }
  });

  test('two components creating one ServiceAccount name do not render; one creating it and the other naming it does', () => {
    const shared = { create: true, name: 'switchboard-s3' };
    assert.match(
      failure(everyComponent, { gateway: { serviceAccount: shared }, browser: { serviceAccount: shared } }),
      /creates ServiceAccount switchboard-s3 too/,
    );
    const rendered = render(everyComponent, {
      gateway: { serviceAccount: shared },
      browser: { serviceAccount: { name: 'switchboard-s3' } },
    });
    assert.equal(componentAccounts(rendered).length, 1);
    assert.equal(extrasOf(rendered, 'browser').serviceAccountName, 'switchboard-s3');
  });

  test('extraEnv and envFrom follow the chart variables of the main container', () => {
    for (const component of components) {
      const main = mainOf(objects, component) as Container & { envFrom?: object[] };
      const names = envNames(main);
      assert.deepEqual(names.slice(-2), ['EXTRA_PLAIN', 'EXTRA_FROM_SECRET'], component);
      // The webhook sender gets no cluster secret; its own secrets key stands for the chart's files.
      const chartFile = component === 'webhooks' ? 'WEBHOOK_SECRETS_KEY_FILE' : 'CLUSTER_SECRET_FILE';
      assert.ok(names.includes(chartFile), `${component}: the chart's own variables stay`);
      assert.deepEqual(main.env!.at(-1)!.valueFrom, {
        secretKeyRef: { name: `${component}-vendor`, key: 'token' },
      });
      assert.deepEqual(main.envFrom, [{ configMapRef: { name: `${component}-settings` } }]);
    }
  });

  test('an extraEnv name the chart sets is refused (a plain one, a Secret mounted as a file, a TLS path)', () => {
    assert.match(
      failure(everyComponent, { llm: { extraEnv: [{ name: 'GRPC_PORT', value: '1' }] } }),
      /extraEnv: GRPC_PORT is set by the chart/,
    );
    assert.match(
      failure({
        gateway: {
          extraEnv: [{ name: 'CLUSTER_SECRET', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }],
        },
      }),
      /extraEnv: CLUSTER_SECRET is set by the chart/,
    );
    assert.match(
      failure(
        { grpcTls: { enabled: true, serverSecret: 'tls' } },
        { gateway: { extraEnv: [{ name: 'GRPC_TLS_CA_FILE', value: '/elsewhere' }] } },
      ),
      /extraEnv: GRPC_TLS_CA_FILE is set by the chart/,
    );
  });

  test("extra volumes and mounts, init containers after the chart's own, sidecars after the main container", () => {
    const synced = render(everyComponent, allExtensions, {
      s3: { existingSecret: 'sb-s3' },
      models: { sync: { enabled: true, image: { tag: 'RELEASE.2025-01-01T00-00-00Z' } } },
    });
    for (const component of components) {
      const pod = podOf(synced, component);
      assert.ok(
        pod.volumes?.some(
          (v) =>
            v.name === 'extra-ca' &&
            (v as { configMap?: { name: string } }).configMap?.name === `${component}-ca`,
        ),
        `${component}: extra volume`,
      );
      assert.deepEqual(
        pod.containers[0]!.volumeMounts!.at(-1),
        { name: 'extra-ca', mountPath: '/etc/extra-ca', readOnly: true },
        `${component}: mounted in the main container`,
      );
      assert.deepEqual(
        pod.containers.map((c) => c.name),
        [component, 'extra-sidecar'],
      );
      const inits = (pod.initContainers ?? []).map((c) => c.name);
      assert.equal(inits.at(-1), 'extra-init', `${component}: the operator's init container runs last`);
      if (component === 'llm') assert.deepEqual(inits, ['sync-models', 'extra-init']);
    }
  });
});

describe('chart extension points: PodDisruptionBudgets never block a drain', () => {
  interface Budget extends K8sObject {
    spec: { minAvailable?: number; maxUnavailable?: number; unhealthyPodEvictionPolicy?: string };
  }
  const budgetOf = (objects: K8sObject[], component: string) =>
    ofKind<Budget>(objects, 'PodDisruptionBudget').find((b) => componentOf(b) === component);

  test('by default every component lets one pod go at a time, even its only one, and never waits on unready pods', () => {
    const objects = render(everyComponent);
    for (const component of components) {
      const budget = budgetOf(objects, component);
      assert.ok(budget, component);
      assert.equal(budget.spec.maxUnavailable, 1, component);
      assert.equal(budget.spec.minAvailable, undefined, component);
      assert.equal(budget.spec.unhealthyPodEvictionPolicy, 'AlwaysAllow', component);
    }
  });

  test('minAvailable renders only while the least replica count is above it', () => {
    const keep = (minAvailable: number) => ({ enabled: true, minAvailable });
    const fixed = (replicas: number) => ({
      gateway: { replicas, autoscaling: { enabled: false }, podDisruptionBudget: keep(1) },
    });
    assert.equal(budgetOf(render(fixed(1)), 'gateway'), undefined, 'one replica, minAvailable 1: no PDB');
    assert.equal(budgetOf(render(fixed(2)), 'gateway')?.spec.minAvailable, 1, 'two replicas: the PDB');
    const autoscaled = (minReplicas: number) => ({
      gateway: { replicas: 5, autoscaling: { enabled: true, minReplicas }, podDisruptionBudget: keep(1) },
    });
    assert.equal(budgetOf(render(autoscaled(1)), 'gateway'), undefined, 'the HPA may scale to one');
    assert.equal(budgetOf(render(autoscaled(2)), 'gateway')?.spec.minAvailable, 1);
    const keda = (minReplicas: number) => ({
      keda: { enabled: true },
      llm: { enabled: true, replicas: 3, autoscaling: { minReplicas }, podDisruptionBudget: keep(1) },
    });
    assert.equal(budgetOf(render(keda(0)), 'llm'), undefined, 'KEDA may scale to zero');
    assert.equal(budgetOf(render(keda(2)), 'llm')?.spec.minAvailable, 1);
    const fixedLlm = { llm: { enabled: true, replicas: 3, podDisruptionBudget: keep(3) } };
    assert.equal(budgetOf(render(fixedLlm), 'llm'), undefined, 'minAvailable equal to replicas: no PDB');
  });

  test('in every render of the matrix (values files, skaffold modules), no PDB can stop a drain', () => {
    for (const entry of renderMatrix()) {
      const objects = renderChart(entry.options);
      for (const budget of ofKind<Budget>(objects, 'PodDisruptionBudget')) {
        const where = `${entry.name}: ${budget.metadata.name}`;
        const deployment = ofKind<DeploymentObject>(objects, 'Deployment').find(
          (d) => componentOf(d) === componentOf(budget),
        )!;
        const autoscaler = [
          ...ofKind(objects, 'HorizontalPodAutoscaler'),
          ...ofKind(objects, 'ScaledObject'),
        ].find((o) => componentOf(o) === componentOf(budget))?.spec as
          { minReplicas?: number; minReplicaCount?: number } | undefined;
        const least = autoscaler
          ? (autoscaler.minReplicas ?? autoscaler.minReplicaCount ?? 1)
          : (deployment.spec.replicas ?? 1);
        if (budget.spec.minAvailable !== undefined) assert.ok(budget.spec.minAvailable < least, where);
        else assert.ok((budget.spec.maxUnavailable ?? 0) >= 1, where);
        assert.equal(budget.spec.unhealthyPodEvictionPolicy, 'AlwaysAllow', where);
      }
    }
  });
});

describe('chart extension points: DNS egress', () => {
  interface Rule {
    to?: { ipBlock?: { cidr: string }; podSelector?: object; namespaceSelector?: object }[];
    ports?: { port: number; protocol: string }[];
  }
  const dnsRules = (objects: K8sObject[], component: string): Rule[] => {
    const labels = templateOf(objects, component).metadata.labels;
    return policiesFor(objects, labels)
      .flatMap((p) => (p.spec.egress ?? []) as Rule[])
      .filter((r) => r.ports?.some((p) => p.port === 53));
  };
  const dnsPorts = [
    { port: 53, protocol: 'UDP' },
    { port: 53, protocol: 'TCP' },
    { port: 5353, protocol: 'UDP' },
    { port: 5353, protocol: 'TCP' },
  ];

  test('every pod reaches the cluster DNS pods on 53 and 5353 (OpenShift), UDP and TCP', () => {
    const objects = render(everyComponent);
    for (const component of components) {
      const rules = dnsRules(objects, component);
      assert.equal(rules.length, 1, component);
      assert.deepEqual(rules[0]!.ports, dnsPorts);
      assert.deepEqual(rules[0]!.to, [
        {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
          podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
        },
      ]);
    }
  });

  test('a NodeLocal DNSCache address (and the kube-dns Service IP it answers on) become ipBlocks; peers and ports can be replaced', () => {
    const objects = render(everyComponent, {
      networkPolicies: {
        dns: {
          to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'openshift-dns' } } }],
          ports: [{ port: 5353, protocol: 'UDP' }],
          nodeLocalAddresses: ['169.254.20.10', '10.96.0.10/32', 'fd00:10:96::a'],
        },
      },
    });
    assert.deepEqual(objects.flatMap(k8sProblems), []);
    for (const component of [...components, 'test']) {
      const labels =
        component === 'test'
          ? ofKind(objects, 'Pod')[0]!.metadata.labels!
          : templateOf(objects, component).metadata.labels;
      const rules = policiesFor(objects, labels)
        .flatMap((p) => (p.spec.egress ?? []) as Rule[])
        .filter((r) => r.ports?.some((p) => p.port === 5353));
      assert.deepEqual(
        rules.map((r) => [r.to, r.ports]),
        [
          [
            [
              { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'openshift-dns' } } },
              { ipBlock: { cidr: '169.254.20.10/32' } },
              { ipBlock: { cidr: '10.96.0.10/32' } },
              { ipBlock: { cidr: 'fd00:10:96::a/128' } },
            ],
            [{ port: 5353, protocol: 'UDP' }],
          ],
        ],
        component,
      );
    }
  });
});

describe('chart extension points: TLS on gateway -> worker gRPC', () => {
  const tls = { grpcTls: { enabled: true, serverSecret: 'sb-grpc-worker', clientSecret: 'sb-grpc-gateway' } };
  const dir = '/var/run/secrets/switchboard-grpc-tls';
  const valueOf = (c: Container, name: string) => c.env?.find((e) => e.name === name)?.value;

  interface TlsVolume {
    name: string;
    secret?: { secretName: string; items?: { key: string; path: string }[]; defaultMode?: number };
  }
  const tlsVolume = (pod: PodSpec): TlsVolume | undefined => pod.volumes?.find((v) => v.name === 'grpc-tls');

  test('workers: their server certificate and the CA of client certificates, from the Secret, read-only', () => {
    const objects = render(everyComponent, tls);
    assert.deepEqual(objects.flatMap(k8sProblems), []);
    for (const worker of workerNames) {
      const pod = podOf(objects, worker);
      const main = pod.containers[0]!;
      assert.equal(valueOf(main, 'GRPC_TLS_CERT_FILE'), `${dir}/tls.crt`, worker);
      assert.equal(valueOf(main, 'GRPC_TLS_KEY_FILE'), `${dir}/tls.key`, worker);
      assert.equal(valueOf(main, 'GRPC_TLS_CA_FILE'), `${dir}/ca.crt`, worker);
      assert.equal(valueOf(main, 'GRPC_TLS_SERVER_NAME'), undefined, worker);
      assert.deepEqual(
        main.volumeMounts?.find((m) => m.name === 'grpc-tls'),
        {
          name: 'grpc-tls',
          mountPath: dir,
          readOnly: true,
        },
      );
      assert.deepEqual(tlsVolume(pod)?.secret, {
        secretName: 'sb-grpc-worker',
        defaultMode: 0o440,
        items: ['tls.crt', 'tls.key', 'ca.crt'].map((k) => ({ key: k, path: k })),
      });
    }
  });

  test("the gateway: its client certificate, the CA of the workers' certificates, the name checked", () => {
    const objects = render(tls, { grpcTls: { serverName: 'switchboard-worker' } });
    const pod = podOf(objects, 'gateway');
    const main = pod.containers[0]!;
    assert.equal(valueOf(main, 'GRPC_TLS_CA_FILE'), `${dir}/ca.crt`);
    assert.equal(valueOf(main, 'GRPC_TLS_CERT_FILE'), `${dir}/tls.crt`);
    assert.equal(valueOf(main, 'GRPC_TLS_KEY_FILE'), `${dir}/tls.key`);
    assert.equal(valueOf(main, 'GRPC_TLS_SERVER_NAME'), 'switchboard-worker');
    assert.equal(valueOf(main, 'GRPC_HEALTH_PORT'), undefined);
    assert.equal(tlsVolume(pod)?.secret?.secretName, 'sb-grpc-gateway');
    const shared = render({ grpcTls: { enabled: true, serverSecret: 'sb-grpc' } });
    assert.equal(
      tlsVolume(podOf(shared, 'gateway'))?.secret?.secretName,
      'sb-grpc',
      'one Secret for both ends',
    );
    assert.equal(valueOf(mainOf(shared, 'gateway'), 'GRPC_TLS_SERVER_NAME'), undefined);
  });

  test('worker probes move to the plaintext health port, declared on the container; without TLS they stay on gRPC', () => {
    const objects = render(everyComponent, tls, { grpcTls: { healthPort: 50070 } });
    for (const worker of workerNames) {
      const main = mainOf(objects, worker);
      assert.equal(valueOf(main, 'GRPC_HEALTH_PORT'), '50070');
      assert.ok(
        main.ports?.some((p) => p.name === 'grpc-health' && p.containerPort === 50070),
        worker,
      );
      for (const probe of [main.startupProbe, main.readinessProbe, main.livenessProbe]) {
        assert.deepEqual(probe?.grpc, { port: 50070 }, worker);
      }
    }
    const plain = render(everyComponent);
    for (const worker of workerNames) {
      const main = mainOf(plain, worker);
      assert.equal(valueOf(main, 'GRPC_HEALTH_PORT'), undefined);
      assert.equal(
        main.ports?.some((p) => p.name === 'grpc-health'),
        false,
      );
      assert.deepEqual(main.readinessProbe?.grpc, { port: 50051 });
      assert.equal(tlsVolume(podOf(plain, worker)), undefined);
    }
  });

  test('the NetworkPolicies are the same with TLS on: no peer reaches the health port', () => {
    const policies = (objects: K8sObject[]) => ofKind(objects, 'NetworkPolicy');
    assert.deepEqual(policies(render(everyComponent, tls)), policies(render(everyComponent)));
  });

  test("every TLS variable the chart sets is one the component's config knows", async () => {
    const objects = render(everyComponent, tls, { grpcTls: { serverName: 'switchboard-worker' } });
    for (const component of components) {
      const config = await serviceConfig(component);
      assert.ok(config, `services/${component} exists`);
      const set = envNames(mainOf(objects, component)).filter(
        (n) => n.startsWith('GRPC_TLS_') || n === 'GRPC_HEALTH_PORT',
      );
      assert.ok(set.length >= 3, component);
      assert.deepEqual(
        set.filter((n) => !config.envVars.includes(n)),
        [],
        `${component}: variables its config does not know`,
      );
    }
  });
});

describe('chart extension points: image names', () => {
  const imagesOf = (objects: K8sObject[]) =>
    ofKind<DeploymentObject>(objects, 'Deployment').flatMap((d) =>
      allContainers(d.spec.template.spec).map((c) => c.image),
    );
  /** How container runtimes tell a registry host: the first of several segments has "." or ":", or is localhost. */
  const fullyQualified = (image: string) => {
    const [first, ...rest] = image.split('/');
    return rest.length > 0 && (/[.:]/.test(first!) || first === 'localhost');
  };

  test('fully qualified by default (docker.io), under global.imageRegistry, or an image registry of its own', () => {
    assert.equal(mainOf(render(), 'gateway').image, 'docker.io/switchboard/gateway:0.1.0');
    const objects = render(everyComponent, {
      global: { imageRegistry: 'ghcr.io/acme' },
      llm: { image: { registry: 'registry.internal:5000' } },
      browser: { image: { repository: 'quay.io/acme/browser', tag: '2.0' } },
    });
    assert.equal(mainOf(objects, 'gateway').image, 'ghcr.io/acme/switchboard/gateway:0.1.0');
    assert.equal(mainOf(objects, 'whisper').image, 'ghcr.io/acme/switchboard/whisper:0.1.0');
    assert.equal(mainOf(objects, 'llm').image, 'registry.internal:5000/switchboard/llm:0.1.0');
    assert.equal(
      mainOf(objects, 'browser').image,
      'quay.io/acme/browser:2.0',
      'a repository with its host is kept',
    );
    const testContainer = (ofKind(objects, 'Pod')[0]!.spec as { containers: Container[] }).containers[0]!;
    assert.equal(testContainer.image, 'ghcr.io/acme/switchboard/gateway:0.1.0', 'the test pod too');
  });

  test("skaffold's image (repository with its registry, tag@digest) is used as it is, whatever global.imageRegistry says", () => {
    const digest = `sha256:${'cd'.repeat(32)}`;
    const objects = renderChart({
      defaults: [brokerCredentials],
      values: [{ global: { imageRegistry: 'ghcr.io/acme' } }],
      set: ['gateway.image.repository=localhost:5000/switchboard/gateway', `gateway.image.tag=dev@${digest}`],
    });
    assert.equal(mainOf(objects, 'gateway').image, `localhost:5000/switchboard/gateway:dev@${digest}`);
  });

  test('in every render of the matrix (values files, skaffold modules), every image is fully qualified', () => {
    for (const entry of renderMatrix()) {
      const objects = renderChart(entry.options);
      for (const image of imagesOf(objects)) assert.ok(fullyQualified(image), `${entry.name}: ${image}`);
    }
  });
});

describe('chart extension points: helm test', () => {
  interface TestPod extends K8sObject {
    metadata: K8sObject['metadata'] & { annotations?: Record<string, string> };
    spec: PodSpec & { restartPolicy: string; containers: (Container & { args?: string[] })[] };
  }
  const testPod = (objects: K8sObject[]) => ofKind<TestPod>(objects, 'Pod')[0];

  test('a test hook running the gateway image, non-root, read-only, with the admin token as a file', () => {
    const objects = render({
      llm: { enabled: true },
      whisper: { enabled: true },
      browser: { enabled: true },
    });
    assert.deepEqual(objects.flatMap(k8sProblems), []);
    const pod = testPod(objects);
    assert.ok(pod);
    assert.equal(pod.metadata.annotations?.['helm.sh/hook'], 'test');
    assert.equal(pod.spec.restartPolicy, 'Never');
    const [container] = pod.spec.containers;
    assert.equal(container!.image, mainOf(objects, 'gateway').image);
    assert.equal(container!.securityContext?.readOnlyRootFilesystem, true);
    assert.equal(container!.securityContext?.runAsNonRoot, true);
    assert.deepEqual(container!.securityContext?.capabilities?.drop, ['ALL']);
    assert.ok(container!.resources?.limits?.memory);
    const env = Object.fromEntries((container!.env ?? []).map((e) => [e.name, e.value]));
    const service = ofKind(objects, 'Service').find((s) => componentOf(s) === 'gateway')!;
    assert.equal(env.GATEWAY_URL, `http://${service.metadata.name}:80`);
    assert.equal(env.EXPECTED_CAPABILITIES, 'llm,whisper', 'the model workers the gateway calls');
    const volume = pod.spec.volumes?.find((v) => v.name === 'admin-token');
    assert.deepEqual(volume?.secret?.items, [{ key: 'token', path: 'admin-token' }]);
    assert.equal(volume?.secret?.secretName, 'sb-switchboard-admin-token');
    const named = testPod(
      render({ adminToken: { existingSecret: 'ops-admin', existingSecretKey: 'admin', create: false } }),
    )!;
    const namedVolume = named.spec.volumes?.find((v) => v.name === 'admin-token');
    assert.equal(namedVolume?.secret?.secretName, 'ops-admin');
    assert.deepEqual(namedVolume?.secret?.items, [{ key: 'admin', path: 'admin-token' }]);
  });

  test('none without the gateway, or with tests.enabled false', () => {
    assert.equal(testPod(render({ gateway: { enabled: false }, llm: { enabled: true } })), undefined);
    assert.equal(testPod(render({ tests: { enabled: false } })), undefined);
  });

  test('the NetworkPolicies let it reach the gateway, also when gatewayFrom narrows who may', () => {
    for (const gatewayFrom of [
      [],
      [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress' } } }],
    ]) {
      const objects = render({ networkPolicies: { gatewayFrom } });
      const from = testPod(objects)!.metadata.labels!;
      const to = templateOf(objects, 'gateway').metadata.labels;
      assert.ok(
        connectionAllowed(objects, from, to, { name: 'http', number: 8080 }),
        JSON.stringify(gatewayFrom),
      );
      const llm = { ...to, 'app.kubernetes.io/component': 'llm' };
      assert.equal(
        connectionAllowed(objects, from, llm, { name: 'grpc', number: 50051 }),
        false,
        'nothing else',
      );
    }
  });

  describe('its script, run against a real gateway and llm worker', () => {
    let llm: ModelStack;
    let script: string;
    let work: string;
    before(async () => {
      const pod = testPod(render({ llm: { enabled: true } }))!;
      const args = pod.spec.containers[0]!.args!;
      assert.deepEqual(args.slice(0, 2), ['node', '-e']);
      script = args[2]!;
      llm = await startLlmStack();
      work = mkdtempSync(join(tmpdir(), 'sb-helm-test-'));
    });
    after(async () => {
      await llm?.stop();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    /** Runs the script as the pod would, in a process of its own (the gateway runs in this one). */
    const run = (adminToken: string, expected: string) => {
      const tokenPath = join(work, 'admin-token');
      writeFileSync(tokenPath, `${adminToken}\n`);
      const child = spawn(process.execPath, ['-e', script], {
        env: {
          PATH: process.env.PATH ?? '',
          GATEWAY_URL: llm.stack.gateway.url,
          ADMIN_TOKEN_PATH: tokenPath,
          EXPECTED_CAPABILITIES: expected,
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        child.on('error', reject);
        child.on('close', (status) => resolve({ status, stdout, stderr }));
      });
    };

    test('passes: /readyz, a key from the admin token, the llm model listed, the key revoked', async () => {
      const result = await run(llm.stack.gateway.adminToken, 'llm');
      assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
      assert.match(result.stdout, /GET \/readyz: 200/);
      assert.match(result.stdout, /GET \/models: 200/);
      assert.match(result.stdout, /llm tiny-llama-dev/);
      assert.match(result.stdout, /DELETE \/admin\/api\/keys\/\S+: 204/);
      const keys = (await (
        await fetch(`${llm.stack.gateway.url}/admin/api/keys`, {
          headers: { authorization: `Bearer ${llm.stack.gateway.adminToken}` },
        })
      ).json()) as { data: { name: string; status: string }[] };
      const made = keys.data.filter((k) => k.name === 'helm test');
      assert.ok(made.length > 0 && made.every((k) => k.status !== 'active'), JSON.stringify(made));
    });

    test('fails, naming the call, with a wrong admin token or a model worker that lists nothing', async () => {
      const wrongToken = await run('not-the-admin-token-0123456789', 'llm');
      assert.equal(wrongToken.status, 1);
      assert.match(
        wrongToken.stderr,
        /helm test failed: POST \/admin\/api\/keys with the admin token: expected 201, got 401/,
      );
      const missing = await run(llm.stack.gateway.adminToken, 'llm,whisper');
      assert.equal(missing.status, 1);
      assert.match(missing.stderr, /helm test failed: GET \/models: no model from whisper/);
    });
  });
});
