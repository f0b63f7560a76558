import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { modelWorkers, workerNames } from './helm-checks.js';
import {
  chartDir,
  helmTemplate,
  helmTemplateFailure,
  repoRoot,
  type K8sObject,
  type RenderOptions,
} from './helm.js';
import { activatedProfiles, applyProfiles, type Config } from './skaffold-profiles.js';

/**
 * The renders of deploy/helm/switchboard that operators and developers actually produce: the
 * chart's defaults (alone, and with every worker and every optional object on), each values file
 * under deploy/helm/values/ as its header comment says to use it, and every release each
 * skaffold.yaml module installs, for `skaffold render` and `skaffold dev` under each profile picked
 * with `-p`, with exactly the values skaffold would pass.
 *
 * skaffold.yaml and the values folder are read when `renderMatrix()` is called, so a module or a
 * values file added later is part of the matrix without an edit here.
 */

export interface MatrixEntry {
  /** Readable and unique: used as a test name. */
  name: string;
  /** What test/support/helm.ts's `helmTemplate` takes. */
  options: RenderOptions;
  source:
    | { kind: 'chart' }
    | { kind: 'values-file'; file: string }
    | {
        kind: 'skaffold';
        module: string;
        /** `render` (what `run` and `deploy` install too) or `dev`. */
        command: string;
        /** Every profile active: the one picked with `-p` and those the command turns on. */
        profiles: string[];
        release: string;
      };
}

export const valuesDir = join(repoRoot, 'deploy', 'helm', 'values');

/**
 * The chart refuses to render a NATS or Redis client without its users' Secret; an operator always
 * names one. Renders that are not skaffold's (whose dev.yaml names them) get these first.
 */
export const brokerCredentials = {
  nats: { auth: { existingSecret: 'sb-nats-users' } },
  redis: { auth: { existingSecret: 'sb-redis-users' } },
};

/** What an operator's release renders to: the broker credentials, then `values` over them. */
export function renderWithBrokers(...values: object[]): K8sObject[] {
  return helmTemplate({ defaults: [brokerCredentials], values });
}

/** Why the chart refuses an operator's `values` (over the broker credentials). */
export function refusalWithBrokers(...values: object[]): string {
  return helmTemplateFailure({ defaults: [brokerCredentials], values });
}

const everyWorker = Object.fromEntries(workerNames.map((w) => [w, { enabled: true }]));
const everyComponent = { ...everyWorker, gateway: { enabled: true } };
const gpuOn = Object.fromEntries(modelWorkers.map((w) => [w, { gpu: { enabled: true, count: 1 } }]));

/** Every extension point a workload has, each given something, for every component. */
const extensions = {
  podLabels: { 'sidecar.istio.io/inject': 'true' },
  // The chart's own scrape annotations come from the same map: a repeated key is invalid YAML.
  podAnnotations: { 'prometheus.io/scrape': 'true', 'example.com/owner': 'media-team' },
  priorityClassName: 'switchboard-high',
  topologySpreadConstraints: [
    { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' },
  ],
  serviceAccount: {
    create: true,
    annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/switchboard' },
  },
  extraEnv: [{ name: 'EXTRA_SETTING', valueFrom: { configMapKeyRef: { name: 'extra', key: 'setting' } } }],
  envFrom: [{ configMapRef: { name: 'extra-env' } }],
  extraVolumes: [{ name: 'extra-ca', configMap: { name: 'extra-ca' } }],
  extraVolumeMounts: [{ name: 'extra-ca', mountPath: '/etc/extra-ca', readOnly: true }],
  initContainers: [{ name: 'wait', image: 'registry.example.com/busybox:1.37', command: ['true'] }],
  sidecars: [{ name: 'proxy', image: 'registry.example.com/proxy:1.0', ports: [{ containerPort: 15001 }] }],
};

/**
 * Traces to a collector in another namespace, with export headers from a Secret: the matrix's checks
 * that Secrets reach Switchboard's containers only as files cover the headers too.
 */
export const tracingOn = {
  tracing: {
    otlpEndpoint: 'http://otel-collector.observability:4318',
    headersSecret: { name: 'otel-headers', key: 'headers' },
  },
  networkPolicies: {
    otelCollector: [
      {
        to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'observability' } } }],
        ports: [{ port: 4318, protocol: 'TCP' }],
      },
    ],
  },
};

/** Every object and option the chart can render that is off by default: KEDA, Ingress, GPU, TLS, … */
const everyOptionalObject = [
  everyComponent,
  gpuOn,
  Object.fromEntries(['gateway', ...workerNames].map((c) => [c, extensions])),
  {
    global: { imageRegistry: 'registry.example.com' },
    keda: {
      enabled: true,
      fallback: { enabled: true, failureThreshold: 3, replicas: 2 },
      prometheus: { authentication: { authModes: 'bearer,basic,tls', existingSecret: 'sb-prometheus-auth' } },
    },
    // PodMonitors here, ServiceMonitors in values/monitoring.yaml: the chart refuses both at once.
    metrics: {
      podMonitor: {
        enabled: true,
        additionalLabels: { release: 'kube-prometheus-stack' },
        relabelings: [
          { action: 'replace', sourceLabels: ['__meta_kubernetes_pod_node_name'], targetLabel: 'node' },
        ],
        metricRelabelings: [{ action: 'drop', sourceLabels: ['__name__'], regex: 'nodejs_gc_.*' }],
      },
      prometheusRule: { enabled: true, additionalLabels: { release: 'kube-prometheus-stack' } },
      grafanaDashboard: { enabled: true, folder: 'Switchboard' },
    },
    grpcTls: { enabled: true, serverSecret: 'sb-grpc-server-tls', clientSecret: 'sb-grpc-client-tls' },
    gateway: {
      ingress: {
        enabled: true,
        className: 'nginx',
        hosts: [{ host: 'api.example.com', paths: [{ path: '/', pathType: 'Prefix' }] }],
        tls: [{ secretName: 'api-tls', hosts: ['api.example.com'] }],
      },
    },
    animation: {
      backends: ['video-diffusion', 'portrait', 'avatar'],
      avatar: { existingSecret: 'sb-avatar', existingSecretKey: 'did-api-key' },
    },
    networkPolicies: {
      enabled: true,
      clusterCIDRs: ['10.96.0.0/12', '10.244.0.0/16'],
      dns: { nodeLocalAddresses: ['169.254.20.10'] },
    },
  },
];

const chartEntries = (): MatrixEntry[] => [
  { name: 'chart defaults', options: { defaults: [brokerCredentials] }, source: { kind: 'chart' } },
  {
    name: 'chart defaults, every worker enabled',
    options: { defaults: [brokerCredentials], values: [everyWorker] },
    source: { kind: 'chart' },
  },
  {
    name: 'chart defaults, every optional object on',
    options: { defaults: [brokerCredentials], values: everyOptionalObject },
    source: { kind: 'chart' },
  },
  {
    name: 'chart defaults, every component tracing',
    options: { defaults: [brokerCredentials], values: [everyComponent, tracingOn] },
    source: { kind: 'chart' },
  },
];

/**
 * How each values file is meant to be used (its header comment): on top of what, and what the
 * operator must still name. A values file missing here fails, so a new one gets a deliberate entry.
 */
const valuesFileUse: Record<string, (file: string) => RenderOptions> = {
  // skaffold's shared values: every module's service on at once (the modules one by one below).
  'dev.yaml': (file) => ({ valuesFiles: [file], values: [everyComponent] }),
  // The gpu profile's values, over every component.
  'gpu.yaml': (file) => ({ defaults: [brokerCredentials], valuesFiles: [file], values: [everyComponent] }),
  // The Prometheus Operator's objects, over every component.
  'monitoring.yaml': (file) => ({
    defaults: [brokerCredentials],
    valuesFiles: [file],
    values: [everyComponent, { keda: { enabled: true } }],
  }),
  // A second release beside the main one: it shares the main release's cluster secret.
  'animation-avatar.yaml': (file) => ({
    releaseName: 'switchboard-avatar',
    defaults: [brokerCredentials],
    valuesFiles: [file],
    values: [
      {
        clusterAuth: { existingSecret: 'sb-cluster', create: false },
        animation: { avatar: { existingSecret: 'sb-avatar' } },
      },
    ],
  }),
};

function valuesFileEntries(): MatrixEntry[] {
  // Files only: the infra/ folder holds values for other charts (dev-infra's NATS, Redis, MinIO).
  const files = readdirSync(valuesDir, { withFileTypes: true })
    .filter((f) => f.isFile() && /\.ya?ml$/.test(f.name))
    .map((f) => f.name)
    .sort();
  const unknown = files.filter((f) => !(f in valuesFileUse));
  if (unknown.length > 0) {
    throw new Error(
      `deploy/helm/values/${unknown.join(', ')}: no entry in test/support/render-matrix.ts says how it is used`,
    );
  }
  return files.map((file) => ({
    name: `values/${file}`,
    options: valuesFileUse[file]!(join(valuesDir, file)),
    source: { kind: 'values-file', file: `deploy/helm/values/${file}` },
  }));
}

/** What decides a skaffold helm release's render. */
export interface SkaffoldHelmRelease {
  name: string;
  chartPath?: string;
  namespace?: string;
  valuesFiles?: string[];
  setValues?: Record<string, unknown>;
  setValueTemplates?: Record<string, string>;
}
interface SkaffoldConfig extends Config {
  deploy?: { helm?: { releases?: SkaffoldHelmRelease[] } };
}

function readSkaffoldConfigs(): SkaffoldConfig[] {
  const text = readFileSync(join(repoRoot, 'skaffold.yaml'), 'utf8');
  return parseAllDocuments(text).map((doc) => {
    if (doc.errors.length > 0)
      throw new Error(`skaffold.yaml: ${doc.errors.map((e) => e.message).join('; ')}`);
    return doc.toJS() as SkaffoldConfig;
  });
}

/** Profiles a user picks with `-p`: those no command turns on by itself. */
const selectableProfiles = (config: SkaffoldConfig): string[] =>
  (config.profiles ?? []).filter((p) => (p.activation ?? []).length === 0).map((p) => p.name);

/**
 * What skaffold substitutes into setValueTemplates after building: the image it built, by
 * repository, tag and digest. Any other template is a value this matrix cannot know, so it fails.
 */
function imageTemplate(template: string, module: string): string {
  const value = template
    .replace(/\{\{\s*\.IMAGE_REPO_[A-Za-z0-9_]+\s*\}\}/g, `registry.example.com/switchboard/${module}`)
    .replace(/\{\{\s*\.IMAGE_TAG_[A-Za-z0-9_]+\s*\}\}/g, 'dev')
    .replace(/\{\{\s*\.IMAGE_DIGEST_[A-Za-z0-9_]+\s*\}\}/g, `sha256:${'ab'.repeat(32)}`);
  if (value.includes('{{')) throw new Error(`skaffold module ${module}: unknown template in ${template}`);
  return value;
}

/** The helm flags skaffold passes for one release of this chart (valuesFiles, setValues, setValueTemplates). */
export function skaffoldReleaseOptions(release: SkaffoldHelmRelease, module: string): RenderOptions {
  const set = [
    ...Object.entries(release.setValues ?? {}).map(([key, value]) => `${key}=${String(value)}`),
    ...Object.entries(release.setValueTemplates ?? {}).map(
      ([key, template]) => `${key}=${imageTemplate(template, module)}`,
    ),
  ];
  return {
    releaseName: release.name,
    ...(release.namespace ? { namespace: release.namespace } : {}),
    valuesFiles: (release.valuesFiles ?? []).map((f) => join(repoRoot, f)),
    set,
  };
}

/**
 * Every release of this chart each module installs, as `skaffold render` (also what `run` and
 * `deploy` install) and `skaffold dev` render it, under each profile a user can pick with `-p`.
 */
function skaffoldEntries(): MatrixEntry[] {
  const entries: MatrixEntry[] = [];
  const chartPath = chartDir.slice(repoRoot.length + 1);
  for (const config of readSkaffoldConfigs()) {
    const module = config.metadata?.name ?? '(unnamed)';
    const selectable = selectableProfiles(config);
    for (const command of ['render', 'dev']) {
      for (const selected of selectable.length > 0 ? selectable : [undefined]) {
        const named = selected ? [selected] : [];
        const profiles = activatedProfiles(config, command, named);
        const applied = applyProfiles(config, command, named);
        const releases = applied.deploy?.helm?.releases ?? [];
        for (const release of releases.filter((r) => r.chartPath === chartPath)) {
          entries.push({
            name: `skaffold ${command} -m ${module}${selected ? ` -p ${selected}` : ''} (release ${release.name})`,
            options: skaffoldReleaseOptions(release, module),
            source: { kind: 'skaffold', module, command, profiles, release: release.name },
          });
        }
      }
    }
  }
  return entries;
}

/** The whole matrix: chart defaults, values files, skaffold modules × profiles. */
export function renderMatrix(): MatrixEntry[] {
  const entries = [...chartEntries(), ...valuesFileEntries(), ...skaffoldEntries()];
  const names = entries.map((e) => e.name);
  const twice = names.filter((n, i) => names.indexOf(n) !== i);
  if (twice.length > 0) throw new Error(`render matrix: names used twice: ${twice.join(', ')}`);
  return entries;
}
