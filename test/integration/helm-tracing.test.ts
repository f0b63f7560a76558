import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import {
  allContainers,
  componentOf,
  connectionAllowed,
  deploymentOf,
  ofKind,
  policiesFor,
  secretFiles,
  serviceConfig,
  workerNames,
  type Container,
  type DeploymentObject,
} from '../support/helm-checks.js';
import { helmNotes, helmTemplate as renderChart, type K8sObject } from '../support/helm.js';
import {
  brokerCredentials,
  refusalWithBrokers,
  renderMatrix,
  renderWithBrokers,
} from '../support/render-matrix.js';

/**
 * Tracing through the chart (values.yaml: tracing, networkPolicies.otelCollector): one value gives
 * every workload the collector's address, the export headers come from a Secret as a mounted file
 * (like every other Secret), and each component's default-deny egress opens to the collector,
 * through the real helm binary.
 */

const components = ['gateway', ...workerNames] as const;
const everyComponent = Object.fromEntries(components.map((c) => [c, { enabled: true }]));

const render = renderWithBrokers;
const failure = refusalWithBrokers;

const endpoint = 'http://otel-collector.observability:4318';
/** A collector in this namespace, so the policies' peers can be checked against its pod labels. */
const collectorLabels = { 'app.kubernetes.io/name': 'otel-collector' };
const collectorRule = {
  to: [{ podSelector: { matchLabels: collectorLabels } }],
  ports: [{ port: 4318, protocol: 'TCP' }],
};
const collector = { networkPolicies: { otelCollector: [collectorRule] } };
const tracing = (extra: object = {}) => ({ tracing: { otlpEndpoint: endpoint, ...extra } });
const headersSecret = { headersSecret: { name: 'otel-headers', key: 'headers' } };

const mainOf = (objects: K8sObject[], component: string): Container => {
  const deployment = deploymentOf(objects, component);
  assert.ok(deployment, `${component} is deployed`);
  return deployment.spec.template.spec.containers[0]!;
};
const envOf = (c: Container, name: string) => (c.env ?? []).filter((e) => e.name === name);
/** The main container's `<NAME>_FILE` variables, resolved to the Secret items mounted there. */
const secretFilesOf = (objects: K8sObject[], component: string) =>
  secretFiles(deploymentOf(objects, component)!.spec.template.spec, mainOf(objects, component));
/** Every env entry of every container taken from a Secret by reference. */
const secretRefs = (objects: K8sObject[]) =>
  everyContainer(objects).flatMap(({ where, container }) =>
    (container.env ?? []).filter((e) => e.valueFrom?.secretKeyRef).map((e) => `${where}: ${e.name}`),
  );
const podLabelsOf = (objects: K8sObject[], component: string) =>
  deploymentOf(objects, component)!.spec.template.metadata.labels;

/** Every container the render holds: Deployments', the secrets hook Job's and the helm test pod's. */
function everyContainer(objects: K8sObject[]): { where: string; container: Container }[] {
  return objects.flatMap((o) => {
    const spec = (o as DeploymentObject).spec as
      { template?: { spec: { containers: Container[] } }; containers?: Container[] } | undefined;
    const pod =
      spec?.template?.spec ?? (spec?.containers ? (spec as { containers: Container[] }) : undefined);
    if (!pod) return [];
    return allContainers(pod).map((container) => ({
      where: `${o.kind}/${o.metadata.name}/${container.name}`,
      container,
    }));
  });
}

const reachesCollector = (objects: K8sObject[], component: string, port = 4318) =>
  connectionAllowed(objects, podLabelsOf(objects, component), collectorLabels, { number: port });

describe('chart: tracing off by default', () => {
  test('no container gets an OTEL_ variable, and no component reaches a collector', () => {
    const objects = render(everyComponent, collector);
    const containers = everyContainer(objects);
    assert.ok(containers.length > components.length, 'the render has containers to check');
    for (const { where, container } of containers) {
      const otel = (container.env ?? []).map((e) => e.name).filter((n) => n.startsWith('OTEL_'));
      assert.deepEqual(otel, [], where);
    }
    for (const component of components) {
      assert.equal(reachesCollector(objects, component), false, `${component}: no collector egress`);
    }
  });
});

describe('chart: tracing.otlpEndpoint', () => {
  const objects = render(everyComponent, tracing(headersSecret), collector, {
    llm: { env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://llm-collector.observability:4318' } },
  });

  test('every workload exports to the collector; a workload env of its own wins', () => {
    for (const component of components) {
      const entries = envOf(mainOf(objects, component), 'OTEL_EXPORTER_OTLP_ENDPOINT');
      const expected = component === 'llm' ? 'http://llm-collector.observability:4318' : endpoint;
      assert.deepEqual(
        entries,
        [{ name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: expected }],
        `${component}: once, as a value`,
      );
    }
  });

  test('the export headers are a file from the Secret, mounted read-only, never a variable', () => {
    for (const component of components) {
      const c = mainOf(objects, component);
      assert.deepEqual(envOf(c, 'OTEL_EXPORTER_OTLP_HEADERS'), [], `${component}: no headers variable`);
      assert.equal(envOf(c, 'OTEL_EXPORTER_OTLP_HEADERS_FILE').length, 1, `${component}: one file`);
      const file = secretFilesOf(objects, component).OTEL_EXPORTER_OTLP_HEADERS;
      assert.ok(file, `${component}: OTEL_EXPORTER_OTLP_HEADERS_FILE names a Secret item`);
      assert.deepEqual(
        { secret: file.secret, key: file.key, readOnly: file.readOnly },
        { secret: 'otel-headers', key: 'headers', readOnly: true },
        `${component}: the named key only, mounted read-only`,
      );
      // Like the chart's other secret files: group-readable at most, writable by no one.
      assert.equal(file.mode & 0o337, 0, `${component}: mode ${file.mode.toString(8)}`);
    }
  });

  test('no container anywhere takes a Secret by reference (secretKeyRef)', () => {
    assert.deepEqual(secretRefs(objects), []);
  });

  test("each service's config knows the tracing variables the chart sets", async () => {
    for (const component of components) {
      const config = await serviceConfig(component);
      assert.ok(config, `services/${component} exists`);
      const otel = (mainOf(objects, component).env ?? []).filter((e) => e.name.startsWith('OTEL_'));
      assert.deepEqual(
        otel.map((e) => e.name).sort(),
        ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_HEADERS_FILE'],
        `${component}: the endpoint and the headers' file`,
      );
      // `<NAME>_FILE` gives NAME's value as a file (libs/config's loadConfig).
      for (const { name } of otel) {
        const known = name.replace(/_FILE$/, '');
        assert.ok(config.envVars.includes(known), `${component} knows ${known}`);
      }
      const value = envOf(mainOf(objects, component), 'OTEL_EXPORTER_OTLP_ENDPOINT')[0]!.value!;
      assert.match(value, /^https?:\/\/\S+$/, `${component}: an http(s) URL, as libs/config requires`);
    }
  });

  test('the secrets hook Job, the helm test pod and init containers get no tracing variables', () => {
    const mains = new Set(components.map((c) => mainOf(objects, c)));
    const others = everyContainer(objects).filter(({ container }) => !mains.has(container));
    assert.ok(
      others.some(({ where }) => where.startsWith('Job/')),
      'the hook Job is rendered',
    );
    for (const { where, container } of others) {
      const otel = (container.env ?? []).map((e) => e.name).filter((n) => n.startsWith('OTEL_'));
      assert.deepEqual(otel, [], where);
    }
  });

  test("each component's egress policy admits the collector's peers on its OTLP/HTTP port only", () => {
    for (const component of components) {
      assert.equal(reachesCollector(objects, component), true, `${component} reaches the collector`);
      assert.equal(reachesCollector(objects, component, 4317), false, `${component}: not on 4317`);
      const egress = policiesFor(objects, podLabelsOf(objects, component)).find((p) =>
        p.metadata.name.endsWith(`-${component}-egress`),
      );
      assert.ok(egress, `${component} has an egress policy`);
      assert.ok(
        egress.spec.egress?.some((rule) => isDeepStrictEqual(rule, collectorRule)),
        `${component}: the otelCollector rule as given`,
      );
    }
  });

  test('peers elsewhere (a namespaceSelector) are passed through as given', () => {
    const elsewhere = {
      to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'observability' } } }],
      ports: [{ port: 4318, protocol: 'TCP' }],
    };
    const rendered = render(everyComponent, tracing(), { networkPolicies: { otelCollector: [elsewhere] } });
    const egressPolicies = ofKind<K8sObject & { spec: { egress?: object[] } }>(
      rendered,
      'NetworkPolicy',
    ).filter(
      (p) =>
        p.metadata.name.endsWith('-egress') &&
        (components as readonly string[]).includes(componentOf(p) ?? ''),
    );
    assert.equal(egressPolicies.length, components.length, 'one egress policy per component');
    for (const policy of egressPolicies) {
      assert.ok(
        (policy.spec.egress ?? []).some((rule) => isDeepStrictEqual(rule, elsewhere)),
        `${policy.metadata.name} (${componentOf(policy)})`,
      );
    }
  });
});

describe('chart: the export headers in every render of the matrix', () => {
  test('Secrets, the headers among them, reach Switchboard containers only as read-only files', () => {
    let headersSeen = 0;
    for (const entry of renderMatrix()) {
      const objects = renderChart(entry.options);
      // An operator's own extraEnv may take a Secret by reference; the chart never gives the headers so.
      assert.deepEqual(
        secretRefs(objects).filter((r) => r.includes(': OTEL_')),
        [],
        `${entry.name}: no OTEL_ variable from a Secret by reference`,
      );
      for (const d of ofKind<DeploymentObject>(objects, 'Deployment')) {
        const where = `${entry.name}: ${d.metadata.name}`;
        const files = secretFiles(d.spec.template.spec, d.spec.template.spec.containers[0]!);
        for (const file of Object.values(files)) {
          assert.match(file.path, /^\/var\/run\/secrets\/switchboard(-[a-z-]+)?\/[a-z0-9.-]+$/, where);
          assert.ok(file.readOnly, `${where}: ${file.name} mounted read-only`);
          assert.ok([0o440, 0o400].includes(file.mode), `${where}: ${file.name} ${file.mode.toString(8)}`);
        }
        if (files.OTEL_EXPORTER_OTLP_HEADERS) headersSeen += 1;
      }
    }
    assert.ok(headersSeen >= components.length, 'the matrix renders the headers on every component');
  });
});

describe('chart: tracing in NOTES.txt', () => {
  test('the notes name the collector only when tracing is on', () => {
    const on = helmNotes({ defaults: [brokerCredentials], values: [tracing(headersSecret), collector] });
    assert.match(
      on,
      /Traces: every workload exports OpenTelemetry spans to http:\/\/otel-collector\.observability:4318/,
    );
    assert.match(on, /headers in Secret otel-headers/);
    assert.doesNotMatch(helmNotes({ defaults: [brokerCredentials] }), /Traces:/);
  });
});

describe('chart: tracing for one workload', () => {
  test('a workload env endpoint alone: only that workload gets the headers and the egress', () => {
    const objects = render(everyComponent, { tracing: headersSecret }, collector, {
      whisper: { env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } },
    });
    for (const component of components) {
      const traces = component === 'whisper';
      const c = mainOf(objects, component);
      assert.equal(
        envOf(c, 'OTEL_EXPORTER_OTLP_HEADERS_FILE').length,
        traces ? 1 : 0,
        `${component}: headers`,
      );
      assert.equal(
        'OTEL_EXPORTER_OTLP_HEADERS' in secretFilesOf(objects, component),
        traces,
        `${component}: the headers' Secret item mounted`,
      );
      assert.equal(envOf(c, 'OTEL_EXPORTER_OTLP_ENDPOINT').length, traces ? 1 : 0, `${component}: endpoint`);
      assert.equal(reachesCollector(objects, component), traces, `${component}: collector egress`);
    }
  });
});

describe('chart: tracing refuses what would not work', () => {
  test('NetworkPolicies on but no collector peers: the render fails and says what to set', () => {
    const message = failure(everyComponent, tracing());
    assert.match(message, /networkPolicies\.otelCollector: gateway exports traces/);
    assert.match(message, /port: 4318/);
  });

  test('a workload env endpoint without collector peers fails the same way', () => {
    const message = failure({ llm: { enabled: true, env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } } });
    assert.match(message, /networkPolicies\.otelCollector: llm exports traces/);
  });

  test('without NetworkPolicies no peers are needed', () => {
    const objects = render(everyComponent, tracing(), { networkPolicies: { enabled: false } });
    assert.deepEqual(ofKind(objects, 'NetworkPolicy'), []);
    for (const component of components) {
      assert.equal(envOf(mainOf(objects, component), 'OTEL_EXPORTER_OTLP_ENDPOINT')[0]?.value, endpoint);
    }
  });

  test('export headers as a plain env value, or an env file of their own, are refused', () => {
    assert.match(
      failure(tracing(), collector, { gateway: { env: { OTEL_EXPORTER_OTLP_HEADERS: 'authorization=x' } } }),
      /gateway\.env\.OTEL_EXPORTER_OTLP_HEADERS: .*tracing\.headersSecret/,
    );
    assert.match(
      failure(tracing(), collector, {
        llm: { enabled: true, env: { OTEL_EXPORTER_OTLP_HEADERS_FILE: '/var/run/secrets/switchboard/x' } },
      }),
      /llm\.env\.OTEL_EXPORTER_OTLP_HEADERS_FILE: .*tracing\.headersSecret/,
    );
  });

  test('extraEnv may not set what tracing sets', () => {
    assert.match(
      failure(tracing(headersSecret), collector, {
        gateway: { extraEnv: [{ name: 'OTEL_EXPORTER_OTLP_HEADERS', value: 'authorization=x' }] },
      }),
      /extraEnv: OTEL_EXPORTER_OTLP_HEADERS is set by the chart/,
    );
    assert.match(
      failure(tracing(headersSecret), collector, {
        gateway: { extraEnv: [{ name: 'OTEL_EXPORTER_OTLP_HEADERS_FILE', value: '/tmp/headers' }] },
      }),
      /extraEnv: OTEL_EXPORTER_OTLP_HEADERS_FILE is set by the chart/,
    );
    assert.match(
      failure(tracing(), collector, {
        llm: { enabled: true, extraEnv: [{ name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: endpoint }] },
      }),
      /extraEnv: OTEL_EXPORTER_OTLP_ENDPOINT is set by the chart/,
    );
  });

  test('the schema refuses an endpoint that is not an http(s) URL and a Secret without its key', () => {
    assert.match(failure({ tracing: { otlpEndpoint: 'otel-collector:4318' } }), /otlpEndpoint/);
    assert.match(failure(tracing({ headersSecret: { name: 'otel-headers', key: '' } }), collector), /key/);
    assert.match(failure({ tracing: { sampler: 'always_on' } }), /sampler/);
  });
});
