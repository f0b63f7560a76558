import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { componentOf, deploymentOf, ofKind, selects, workerNames } from '../support/helm-checks.js';
import { chartDir, helmTemplate, helmTemplateFailure, type K8sObject } from '../support/helm.js';
import { brokerCredentials, valuesDir } from '../support/render-matrix.js';

/**
 * The chart's objects for the Prometheus Operator and Grafana: a monitor per component that finds
 * the metrics port of exactly that component's pods, labelled for kube-prometheus-stack's selectors
 * and keeping the processes' own `service` label; the dashboard ConfigMap for Grafana's sidecar;
 * and KEDA's TriggerAuthentication and fallback. (The alert rules: prometheus-rules.test.ts.)
 */

const components = ['gateway', ...workerNames];
const everyComponent = Object.fromEntries(components.map((c) => [c, { enabled: true }]));
const render = (...values: object[]) =>
  helmTemplate({ values: [brokerCredentials, everyComponent, ...values] });

interface Endpoint {
  port: string;
  path: string;
  honorLabels: boolean;
  interval: string;
  scrapeTimeout: string;
  relabelings?: unknown[];
}
interface Monitor extends K8sObject {
  spec: {
    selector: { matchLabels: Record<string, string> };
    namespaceSelector: { matchNames: string[] };
    endpoints?: Endpoint[];
    podMetricsEndpoints?: Endpoint[];
  };
}
interface ServiceObject extends K8sObject {
  spec: { selector: Record<string, string>; ports: { name: string; port: number; targetPort: string }[] };
}
interface PodTemplate {
  metadata: { labels: Record<string, string>; annotations: Record<string, string> };
  spec: { containers: { ports?: { name: string; containerPort: number }[] }[] };
}

const podTemplate = (objects: K8sObject[], component: string) =>
  (deploymentOf(objects, component)!.spec as unknown as { template: PodTemplate }).template;

describe('chart: ServiceMonitors and PodMonitors', () => {
  test('none by default, and never both kinds at once', () => {
    const objects = render();
    assert.equal(ofKind(objects, 'ServiceMonitor').length + ofKind(objects, 'PodMonitor').length, 0);
    assert.ok(!ofKind(objects, 'Service').some((s) => s.metadata.name.endsWith('-metrics')));
    const error = helmTemplateFailure({
      values: [
        brokerCredentials,
        { metrics: { serviceMonitor: { enabled: true }, podMonitor: { enabled: true } } },
      ],
    });
    assert.match(error, /serviceMonitor or podMonitor, not both/);
  });

  test('a ServiceMonitor per component reaches its pods’ metrics port through a Service, keeping their service label', () => {
    const relabelings = [
      { action: 'replace', sourceLabels: ['__meta_kubernetes_pod_node_name'], targetLabel: 'node' },
    ];
    const objects = render({
      metrics: {
        serviceMonitor: {
          enabled: true,
          additionalLabels: { release: 'kube-prometheus-stack' },
          interval: '15s',
          relabelings,
        },
      },
    });
    const monitors = ofKind<Monitor>(objects, 'ServiceMonitor');
    assert.deepEqual(monitors.map(componentOf).sort(), [...components].sort());
    const services = ofKind<ServiceObject>(objects, 'Service');
    for (const monitor of monitors) {
      const component = componentOf(monitor)!;
      assert.equal(monitor.metadata.labels?.release, 'kube-prometheus-stack');
      assert.deepEqual(monitor.spec.namespaceSelector.matchNames, ['switchboard']);
      const [endpoint, ...more] = monitor.spec.endpoints ?? [];
      assert.equal(more.length, 0);
      assert.deepEqual(
        { ...endpoint, relabelings: endpoint?.relabelings },
        {
          port: 'metrics',
          path: '/metrics',
          honorLabels: true,
          interval: '15s',
          scrapeTimeout: '10s',
          relabelings,
        },
      );
      // The Services the monitor selects that have a metrics port: exactly one, whose selector
      // picks this component's pods, whose container serves the metrics port.
      const scraped = services.filter(
        (s) =>
          selects(monitor.spec.selector.matchLabels, s.metadata.labels ?? {}) &&
          s.spec.ports.some((p) => p.name === 'metrics'),
      );
      assert.equal(scraped.length, 1, `${component}: one Service with a metrics port`);
      const port = scraped[0]!.spec.ports.find((p) => p.name === 'metrics')!;
      assert.equal(port.port, 9464);
      const pod = podTemplate(objects, component);
      assert.ok(
        selects(scraped[0]!.spec.selector, pod.metadata.labels),
        `${component}: the Service selects its pods`,
      );
      assert.ok(
        pod.spec.containers[0]!.ports!.some((p) => p.name === port.targetPort && p.containerPort === 9464),
      );
      // The annotations stay for a Prometheus that discovers pods by them.
      assert.equal(pod.metadata.annotations['prometheus.io/scrape'], 'true');
      assert.equal(pod.metadata.annotations['prometheus.io/port'], '9464');
    }
    // The gateway's public Service still carries HTTP only.
    const gatewayService = services.find((s) => s.metadata.name === 'sb-switchboard-gateway')!;
    assert.deepEqual(
      gatewayService.spec.ports.map((p) => p.name),
      ['http'],
    );
  });

  test('a PodMonitor per component selects exactly its pods', () => {
    const objects = render({
      metrics: { podMonitor: { enabled: true, additionalLabels: { team: 'media' } } },
    });
    const monitors = ofKind<Monitor>(objects, 'PodMonitor');
    assert.deepEqual(monitors.map(componentOf).sort(), [...components].sort());
    assert.ok(!ofKind(objects, 'Service').some((s) => s.metadata.name.endsWith('-metrics')));
    for (const monitor of monitors) {
      const component = componentOf(monitor)!;
      assert.equal(monitor.metadata.labels?.team, 'media');
      assert.equal(monitor.spec.podMetricsEndpoints?.[0]?.port, 'metrics');
      assert.equal(monitor.spec.podMetricsEndpoints?.[0]?.honorLabels, true);
      for (const other of components) {
        const labels = podTemplate(objects, other).metadata.labels;
        assert.equal(
          selects(monitor.spec.selector.matchLabels, labels),
          other === component,
          `${component}'s PodMonitor and ${other}'s pods`,
        );
      }
    }
  });

  test('values/monitoring.yaml: ServiceMonitors, rule and dashboard labelled for kube-prometheus-stack', () => {
    const objects = helmTemplate({
      valuesFiles: [join(valuesDir, 'monitoring.yaml')],
      values: [brokerCredentials, everyComponent],
    });
    for (const kind of ['ServiceMonitor', 'PrometheusRule'])
      for (const o of ofKind(objects, kind))
        assert.equal(o.metadata.labels?.release, 'kube-prometheus-stack', kind);
    assert.equal(ofKind(objects, 'ServiceMonitor').length, components.length);
    assert.equal(ofKind(objects, 'PrometheusRule').length, 1);
    assert.ok(ofKind(objects, 'ConfigMap').some((c) => c.metadata.labels?.grafana_dashboard === '1'));
  });
});

describe('chart: Grafana dashboard', () => {
  test('a ConfigMap with the sidecar’s label, the optional folder annotation and the dashboard file', () => {
    const dashboardOf = (objects: K8sObject[]) =>
      ofKind(objects, 'ConfigMap').filter((c) => componentOf(c) === 'dashboard') as (K8sObject & {
        metadata: { annotations?: Record<string, string> };
        data: Record<string, string>;
      })[];
    assert.equal(dashboardOf(render()).length, 0);
    const [plain] = dashboardOf(render({ metrics: { grafanaDashboard: { enabled: true } } }));
    assert.equal(plain?.metadata.labels?.grafana_dashboard, '1');
    assert.equal(plain?.metadata.annotations, undefined);
    const file = readFileSync(join(chartDir, 'files', 'grafana', 'switchboard.json'), 'utf8');
    assert.deepEqual(JSON.parse(plain.data['switchboard.json'] ?? 'null'), JSON.parse(file));
    const [custom] = dashboardOf(
      render({
        metrics: {
          grafanaDashboard: {
            enabled: true,
            label: 'dashboards',
            labelValue: 'switchboard',
            folder: 'Media',
          },
        },
      }),
    );
    assert.equal(custom?.metadata.labels?.dashboards, 'switchboard');
    assert.equal(custom?.metadata.labels?.grafana_dashboard, undefined);
    assert.deepEqual(custom?.metadata.annotations, { grafana_folder: 'Media' });
  });
});

interface ScaledObject extends K8sObject {
  spec: {
    fallback?: { failureThreshold: number; replicas: number };
    triggers: { type: string; metadata: Record<string, string>; authenticationRef?: { name: string } }[];
  };
}

describe('chart: KEDA authentication and fallback', () => {
  const keda = (extra: object) => render({ keda: { enabled: true, ...extra } });

  test('a TriggerAuthentication with the parameters of each auth mode, referenced by every Prometheus trigger', () => {
    const objects = keda({
      prometheus: {
        authentication: {
          authModes: 'bearer, basic',
          existingSecret: 'prom-auth',
          secretKeys: { bearerToken: 'jwt' },
        },
      },
    });
    const [auth, ...more] = ofKind<
      K8sObject & { spec: { secretTargetRef: { parameter: string; name: string; key: string }[] } }
    >(objects, 'TriggerAuthentication');
    assert.equal(more.length, 0);
    assert.deepEqual(auth!.spec.secretTargetRef, [
      { parameter: 'bearerToken', name: 'prom-auth', key: 'jwt' },
      { parameter: 'username', name: 'prom-auth', key: 'username' },
      { parameter: 'password', name: 'prom-auth', key: 'password' },
    ]);
    for (const scaled of ofKind<ScaledObject>(objects, 'ScaledObject')) {
      for (const trigger of scaled.spec.triggers) {
        if (trigger.type === 'prometheus') {
          assert.equal(trigger.metadata.authModes, 'bearer, basic');
          assert.equal(trigger.authenticationRef?.name, auth!.metadata.name);
        } else assert.equal(trigger.authenticationRef, undefined);
      }
    }
    const tls = ofKind(
      keda({ prometheus: { authentication: { authModes: 'tls', existingSecret: 'prom-tls' } } }),
      'TriggerAuthentication',
    );
    assert.deepEqual(
      (tls[0]!.spec as { secretTargetRef: { parameter: string }[] }).secretTargetRef.map((r) => r.parameter),
      ['ca', 'cert', 'key'],
    );
    assert.match(
      helmTemplateFailure({
        values: [
          brokerCredentials,
          everyComponent,
          { keda: { enabled: true, prometheus: { authentication: { authModes: 'bearer' } } } },
        ],
      }),
      /existingSecret is required/,
    );
    assert.equal(ofKind(keda({}), 'TriggerAuthentication').length, 0);
  });

  test('fallback only when enabled, on every ScaledObject', () => {
    assert.ok(ofKind<ScaledObject>(keda({}), 'ScaledObject').every((s) => s.spec.fallback === undefined));
    const scaled = ofKind<ScaledObject>(
      keda({ fallback: { enabled: true, failureThreshold: 5, replicas: 2 } }),
      'ScaledObject',
    );
    assert.equal(scaled.length, workerNames.length);
    for (const s of scaled) assert.deepEqual(s.spec.fallback, { failureThreshold: 5, replicas: 2 });
  });

  test('Prometheus queries get the release namespace on every selector; the schema refuses one without braces', () => {
    const objects = helmTemplate({
      namespace: 'media',
      values: [
        brokerCredentials,
        everyComponent,
        { keda: { enabled: true }, llm: { autoscaling: { trigger: { query: 'sum(a{x="1"}) / sum(b{})' } } } },
      ],
    });
    const llm = ofKind<ScaledObject>(objects, 'ScaledObject').find((s) => componentOf(s) === 'llm')!;
    assert.equal(
      llm.spec.triggers[0]!.metadata.query,
      'sum(a{namespace="media",x="1"}) / sum(b{namespace="media",})',
    );
    assert.match(
      helmTemplateFailure({
        values: [
          brokerCredentials,
          { llm: { enabled: true, autoscaling: { trigger: { query: 'sum(llm_queue_depth)' } } } },
        ],
      }),
      /query/,
    );
  });
});
