import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import {
  defaultResources,
  natsPermissions,
  natsRoles,
  redisAclRules,
  redisRoles,
} from '@switchboard/broker-auth';
import { backendNames, jobNames } from '@switchboard/jobs';
import { aptPackages, dockerEnv, dockerExposed } from '../support/bundle.js';
import {
  dockerInstructions,
  parseDockerfile,
  resolveStage,
  serviceImage,
  type ServiceImage,
  type Variant,
} from '../support/dockerfile.js';
import { testClusterSecret } from '../support/gateway.js';
import { applyProfiles } from '../support/skaffold-profiles.js';
import {
  allContainers,
  componentOf,
  connectionAllowed,
  cpuCores,
  deploymentOf,
  egressAllowsAddress,
  envNames,
  getPath,
  grpcWorkers,
  k8sProblems,
  memoryBytes,
  modelWorkers,
  ofKind,
  policiesFor,
  secretFiles,
  selects,
  serviceConfig,
  serviceMetricsText,
  workerNames,
  type Container,
  type DeploymentObject,
  type WorkerName,
} from '../support/helm-checks.js';
import {
  chartDir,
  helmLint as lintChart,
  helmNotes as chartNotes,
  helmTemplate as renderChart,
  helmTemplateFailure as chartFailure,
  repoRoot,
  type K8sObject,
  type RenderOptions,
} from '../support/helm.js';

/**
 * deploy/helm/switchboard through the real helm binary (v4, offline): `helm lint --strict` and
 * `helm template` over a matrix of values, every rendered object validated against the Kubernetes
 * (and KEDA) schemas, and the properties the chart promises checked on what it renders.
 */

/**
 * The NATS and Redis credentials every install must name (the chart refuses to render a NATS or
 * Redis client without them): every render below gets them first, under its own values, unless it
 * passes `defaults: []` ('chart: broker credentials' does).
 */
const brokerCredentials = {
  nats: { auth: { existingSecret: 'sb-nats-users' } },
  redis: { auth: { existingSecret: 'sb-redis-users' } },
};
const withCredentials = (options: RenderOptions = {}): RenderOptions => ({
  defaults: [brokerCredentials],
  ...options,
});
const helmTemplate = (options?: RenderOptions) => renderChart(withCredentials(options));
const helmTemplateFailure = (options: RenderOptions) => chartFailure(withCredentials(options));
const helmLint = (options?: RenderOptions) => lintChart(withCredentials(options));
const helmNotes = (options?: RenderOptions) => chartNotes(withCredentials(options));

const clusterCIDRs = ['10.96.0.0/12', '10.244.0.0/16', '198.18.0.0/15', 'fd00:10:96::/112'];
const allWorkers = Object.fromEntries(workerNames.map((w) => [w, { enabled: true }]));
const gpuOn = Object.fromEntries(modelWorkers.map((w) => [w, { gpu: { enabled: true, count: 1 } }]));
const externalInfra = {
  nats: {
    url: 'tls://nats.messaging.example.net:4222',
    existingSecret: 'sb-nats',
    existingSecretKey: 'url',
    auth: {
      existingSecret: 'sb-nats-passwords',
      users: {
        gateway: 'sb-gateway',
        browser: 'sb-browser',
        animation: 'sb-animation',
        webhooks: 'sb-webhooks',
      },
    },
  },
  redis: {
    url: 'rediss://redis.cache.example.net:6380',
    existingSecret: 'sb-redis',
    auth: { existingSecret: 'sb-redis-passwords', users: { gateway: 'sb-gateway' } },
  },
  s3: { endpoint: 'https://s3.eu-west-1.amazonaws.com', bucket: 'sb-media', existingSecret: 'sb-s3' },
  adminToken: { existingSecret: 'sb-admin', existingSecretKey: 'admin-token', create: false },
  clusterAuth: { existingSecret: 'sb-cluster', existingSecretKey: 'cluster-secret', create: false },
  keyPepper: { existingSecret: 'sb-key-pepper', existingSecretKey: 'pepper', create: false },
};
const edge = {
  gateway: {
    ipAllowlist: '203.0.113.0/24,2001:db8::/32',
    trustedProxies: '10.0.0.0/8',
    tierPolicies: { basic: { requests_per_minute: 30 } },
    workerAddresses: { llm: 'llm.other-namespace.svc.cluster.local:50051' },
    env: { AUTH_FAILURES_PER_MINUTE: '10', LLM_DEADLINE_MS: '120000' },
    service: { type: 'LoadBalancer', loadBalancerSourceRanges: ['203.0.113.0/24'] },
    ingress: {
      enabled: true,
      className: 'nginx',
      hosts: [{ host: 'api.example.com', paths: [{ path: '/', pathType: 'Prefix' }] }],
      tls: [{ secretName: 'api-tls', hosts: ['api.example.com'] }],
    },
  },
};
const valuesDir = join(repoRoot, 'deploy', 'helm', 'values');
/** The services of the workspace (services/<name>/package.json): each has an image. */
const workspaceServices = readdirSync(join(repoRoot, 'services')).filter((s) =>
  existsSync(join(repoRoot, 'services', s, 'package.json')),
);
/** The images of a service: its CPU image, and a CUDA variant for each model worker (ONNX Runtime). */
const imageVariants = (service: string): Variant[] =>
  (modelWorkers as readonly string[]).includes(service) ? ['cpu', 'cuda'] : ['cpu'];
/** The animation worker with every back-end configured: the avatar vendor's key from a Secret. */
const animationAllBackends = {
  animation: {
    enabled: true,
    backends: ['video-diffusion', 'portrait', 'avatar'],
    avatar: { existingSecret: 'sb-avatar', existingSecretKey: 'did-api-key' },
  },
};

interface Case {
  options: RenderOptions;
  workers: readonly WorkerName[];
  gpu: readonly WorkerName[];
  keda: boolean;
  networkPolicies: boolean;
}

const matrix: Record<string, Case> = {
  defaults: { options: {}, workers: [], gpu: [], keda: false, networkPolicies: true },
  'every worker enabled': {
    options: { values: [allWorkers] },
    workers: workerNames,
    gpu: [],
    keda: false,
    networkPolicies: true,
  },
  'GPU on (llm, whisper, diffusion, animation)': {
    options: { values: [allWorkers, gpuOn] },
    workers: workerNames,
    gpu: modelWorkers,
    keda: false,
    networkPolicies: true,
  },
  'KEDA on': {
    options: { values: [allWorkers, { keda: { enabled: true } }] },
    workers: workerNames,
    gpu: [],
    keda: true,
    networkPolicies: true,
  },
  'KEDA on, llm only': {
    options: { values: [{ llm: { enabled: true }, keda: { enabled: true } }] },
    workers: ['llm'],
    gpu: [],
    keda: true,
    networkPolicies: true,
  },
  'network policies off': {
    options: { values: [allWorkers, { networkPolicies: { enabled: false } }] },
    workers: workerNames,
    gpu: [],
    keda: false,
    networkPolicies: false,
  },
  'network policies on': {
    options: { values: [allWorkers, { networkPolicies: { enabled: true, clusterCIDRs } }] },
    workers: workerNames,
    gpu: [],
    keda: false,
    networkPolicies: true,
  },
  'external infra URLs and secrets': {
    options: { values: [allWorkers, externalInfra] },
    workers: workerNames,
    gpu: [],
    keda: false,
    networkPolicies: true,
  },
  'edge: LoadBalancer, ingress, allowlist, tiers': {
    options: { values: [edge] },
    workers: [],
    gpu: [],
    keda: false,
    networkPolicies: true,
  },
  'models from a PVC': {
    options: { values: [allWorkers, { models: { existingClaim: 'models', subPath: 'onnx' } }] },
    workers: workerNames,
    gpu: [],
    keda: false,
    networkPolicies: true,
  },
  'models synced from the object store': {
    options: {
      values: [
        allWorkers,
        { s3: { existingSecret: 'sb-s3' } },
        { models: { sync: { enabled: true, image: { tag: 'RELEASE.2025-01-01T00-00-00Z' } } } },
      ],
    },
    workers: workerNames,
    gpu: [],
    keda: false,
    networkPolicies: true,
  },
  'skaffold: dev values, gateway module': {
    options: { valuesFiles: [join(valuesDir, 'dev.yaml')], values: [{ gateway: { enabled: true } }] },
    workers: [],
    gpu: [],
    keda: false,
    networkPolicies: true,
  },
  'skaffold: dev + gpu values, every worker': {
    options: {
      valuesFiles: [join(valuesDir, 'dev.yaml'), join(valuesDir, 'gpu.yaml')],
      values: [allWorkers, { gateway: { enabled: true } }],
    },
    workers: workerNames,
    gpu: modelWorkers,
    keda: false,
    networkPolicies: true,
  },
  'animation: every back-end, the avatar Secret, GPU, KEDA from zero': {
    options: {
      values: [
        animationAllBackends,
        { animation: { gpu: { enabled: true, count: 1 } } },
        { keda: { enabled: true }, networkPolicies: { clusterCIDRs } },
      ],
    },
    workers: ['animation'],
    gpu: ['animation'],
    keda: true,
    networkPolicies: true,
  },
  'everything on': {
    options: {
      values: [
        allWorkers,
        gpuOn,
        externalInfra,
        edge,
        animationAllBackends,
        {
          // The NATS URL is in a Secret: KEDA's JetStream triggers need the monitor named.
          keda: { enabled: true, nats: { monitoringEndpoint: 'nats.messaging.example.net:8222' } },
          networkPolicies: { enabled: true, clusterCIDRs },
        },
      ],
    },
    workers: workerNames,
    gpu: modelWorkers,
    keda: true,
    networkPolicies: true,
  },
};

const rendered = new Map<string, K8sObject[]>();
function render(name: string): K8sObject[] {
  let objects = rendered.get(name);
  if (!objects) {
    objects = helmTemplate(matrix[name]!.options);
    rendered.set(name, objects);
  }
  return objects;
}

const mainContainer = (d: DeploymentObject): Container => d.spec.template.spec.containers[0]!;
/** The Secret items a Deployment's main container reads as files, by the variable they hold. */
const secretsOf = (d: DeploymentObject) => secretFiles(d.spec.template.spec, mainContainer(d));
/** The Secret and key a variable of a Deployment's main container comes from, if it does. */
const secretRef = (d: DeploymentObject, variable: string) => {
  const file = secretsOf(d)[variable];
  return file && { name: file.secret, key: file.key };
};

/** What the kubelet would put in a pod's status for the downward API (fieldRef stand-ins). */
const standInPodIP = '10.244.3.17';
const standInFields: Record<string, string> = {
  'status.podIP': standInPodIP,
  'metadata.name': 'sb-switchboard-browser-5d9c7b6f4-abcde',
  'metadata.namespace': 'switchboard',
};

/** What the Secrets the chart mounts would hold: a stand-in per variable. */
const standInSecrets: Record<string, string> = {
  ADMIN_TOKEN: 'a-stand-in-admin-token-0123456789',
  CLUSTER_SECRET: 'a-stand-in-cluster-secret-0123456789',
  KEY_PEPPER: 'a-stand-in-key-pepper-0123456789abcdef',
  NATS_URL: 'nats://from-a-secret:4222',
  NATS_PASSWORD: 'stand-in-nats-password',
  REDIS_URL: 'redis://from-a-secret:6379',
  USAGE_DATABASE_URL: 'postgresql://gateway:from-a-secret@postgresql:5432/switchboard',
  WEBHOOK_DATABASE_URL: 'postgresql://webhooks:from-a-secret@postgresql:5432/switchboard',
  WEBHOOK_SECRETS_KEY: 'a-stand-in-webhook-secrets-key-0123456789',
  REDIS_PASSWORD: 'stand-in-redis-password',
  S3_ACCESS_KEY: 'stand-in-access-key',
  S3_SECRET_KEY: 'stand-in-secret-key',
  AVATAR_API_KEY: 'stand-in-avatar-api-key',
};

/**
 * A container's environment as the process would see it: each `<NAME>_FILE` (a Secret item mounted
 * as a file, which libs/config reads as NAME) becomes NAME with a stand-in value, downward-API fields
 * the values the kubelet would fill in.
 */
function containerEnvironment(container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of container.env ?? []) {
    assert.equal(entry.valueFrom?.secretKeyRef, undefined, `${entry.name}: Secrets come as files`);
    const fromFile = entry.name.endsWith('_FILE') ? entry.name.slice(0, -'_FILE'.length) : undefined;
    if (fromFile !== undefined) {
      assert.ok(standInSecrets[fromFile], `${entry.name}: the test has no stand-in for ${fromFile}`);
      env[fromFile] = standInSecrets[fromFile];
    } else if (entry.value !== undefined) env[entry.name] = entry.value;
    else {
      const fieldPath = entry.valueFrom?.fieldRef?.fieldPath ?? '';
      assert.ok(standInFields[fieldPath], `${entry.name}: the test has no stand-in for ${fieldPath}`);
      env[entry.name] = standInFields[fieldPath];
    }
  }
  return env;
}

/** Whether a container gets a variable, as a value or as a file (`<NAME>_FILE`). */
const sets = (c: Container, name: string) => envNames(c).some((n) => n === name || n === `${name}_FILE`);
/** Whether a service's config knows a variable the chart sets (`<NAME>_FILE` for NAME). */
const knows = (envVars: string[], name: string) => envVars.includes(name.replace(/_FILE$/, ''));

/** Variables the chart must set on a worker (as values or files), beyond what its config defaults. */
const chartSetsOnEveryWorker = ['GRPC_PORT', 'METRICS_PORT', 'LOG_LEVEL', 'CLUSTER_SECRET'];
const chartSetsOn: Partial<Record<WorkerName, string[]>> = {
  // The registry address gateways dial (the pod IP), and the relay port the container declares;
  // NATS (the session registry) as its own user.
  browser: ['BROWSER_ADVERTISE_HOST', 'DEVTOOLS_PORT', 'NATS_URL', 'NATS_USER', 'NATS_PASSWORD'],
  // Jobs come from the JetStream work queue, as its own NATS user.
  animation: ['NATS_URL', 'NATS_USER', 'NATS_PASSWORD'],
  // Events from JetStream as its own NATS user; deliveries in PostgreSQL, secrets sealed under the key.
  webhooks: ['NATS_URL', 'NATS_USER', 'NATS_PASSWORD', 'WEBHOOK_DATABASE_URL', 'WEBHOOK_SECRETS_KEY'],
};
/** The webhook sender is called by no one and calls no worker: it gets no CLUSTER_SECRET. */
const setOnWorker = (worker: string) =>
  chartSetsOnEveryWorker.filter((name) => worker !== 'webhooks' || name !== 'CLUSTER_SECRET');

for (const [name, expected] of Object.entries(matrix)) {
  describe(`chart: ${name}`, () => {
    test('helm lint --strict passes', () => {
      const result = helmLint(expected.options);
      assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    });

    test('every object has apiVersion, kind, a DNS-1123 name and validates against its schema', () => {
      const objects = render(name);
      assert.ok(objects.length > 0);
      assert.deepEqual(objects.flatMap(k8sProblems), []);
      const ids = objects.map((o) => `${o.kind}/${o.metadata.name}`);
      assert.deepEqual(
        ids.filter((id, i) => ids.indexOf(id) !== i),
        [],
        'no duplicate objects',
      );
    });

    test('exactly the expected components are deployed', () => {
      const components = ofKind(render(name), 'Deployment').map(componentOf).sort();
      assert.deepEqual(components, ['gateway', ...expected.workers].sort());
    });

    test('no container runs as root; read-only root filesystem everywhere; /tmp is a volume', () => {
      for (const d of ofKind<DeploymentObject>(render(name), 'Deployment')) {
        const pod = d.spec.template.spec;
        assert.equal(pod.securityContext?.runAsNonRoot, true, `${d.metadata.name}: pod runAsNonRoot`);
        assert.ok((pod.securityContext?.runAsUser ?? 0) > 0, `${d.metadata.name}: pod runAsUser is not 0`);
        for (const c of allContainers(pod)) {
          const where = `${d.metadata.name}/${c.name}`;
          assert.equal(c.securityContext?.runAsNonRoot, true, `${where}: runAsNonRoot`);
          assert.ok((c.securityContext?.runAsUser ?? 0) > 0, `${where}: runAsUser is not 0`);
          assert.equal(c.securityContext?.readOnlyRootFilesystem, true, `${where}: readOnlyRootFilesystem`);
          assert.equal(
            c.securityContext?.allowPrivilegeEscalation,
            false,
            `${where}: no privilege escalation`,
          );
          assert.deepEqual(
            c.securityContext?.capabilities?.drop,
            ['ALL'],
            `${where}: drops all capabilities`,
          );
          const tmp = c.volumeMounts?.find((m) => m.mountPath === '/tmp');
          assert.ok(tmp, `${where}: /tmp is mounted`);
          assert.ok(pod.volumes?.find((v) => v.name === tmp.name)?.emptyDir, `${where}: /tmp is an emptyDir`);
          const names = envNames(c);
          assert.deepEqual(
            names.filter((n, i) => names.indexOf(n) !== i),
            [],
            `${where}: no variable set twice`,
          );
        }
      }
    });

    test('Services, PDBs, HPAs and ScaledObjects point at rendered Deployments', () => {
      const objects = render(name);
      const deployments = ofKind<DeploymentObject>(objects, 'Deployment');
      for (const d of deployments) {
        assert.ok(
          selects(d.spec.selector.matchLabels, d.spec.template.metadata.labels),
          `${d.metadata.name}`,
        );
      }
      const selectsAPod = (selector: Record<string, string>) =>
        deployments.some((d) => selects(selector, d.spec.template.metadata.labels));
      for (const s of ofKind(objects, 'Service')) {
        assert.ok(
          selectsAPod((s.spec as { selector: Record<string, string> }).selector),
          `Service ${s.metadata.name}`,
        );
      }
      for (const p of ofKind(objects, 'PodDisruptionBudget')) {
        const selector = (p.spec as { selector: { matchLabels: Record<string, string> } }).selector
          .matchLabels;
        assert.ok(selectsAPod(selector), `PDB ${p.metadata.name}`);
      }
      const deploymentNames = deployments.map((d) => d.metadata.name);
      for (const o of [...ofKind(objects, 'HorizontalPodAutoscaler'), ...ofKind(objects, 'ScaledObject')]) {
        const target = (o.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name;
        assert.ok(deploymentNames.includes(target), `${o.kind} ${o.metadata.name} targets ${target}`);
      }
      // skaffold's dev values turn PodDisruptionBudgets off (single replicas on a dev cluster).
      if (!name.startsWith('skaffold')) {
        for (const component of ['gateway', ...expected.workers]) {
          const pdbs = ofKind(objects, 'PodDisruptionBudget').filter((p) => componentOf(p) === component);
          assert.equal(pdbs.length, 1, `${component} has a PodDisruptionBudget`);
        }
      }
    });

    test('every env var the chart sets on the gateway is one the gateway config knows, and it loads', async () => {
      const gateway = await serviceConfig('gateway');
      assert.ok(gateway, 'services/gateway/src/config.ts exists');
      const container = mainContainer(deploymentOf(render(name), 'gateway')!);
      // `<NAME>_FILE` gives a variable's value as a file (libs/config's loadConfig).
      const unknown = envNames(container).filter((n) => !knows(gateway.envVars, n));
      assert.deepEqual(unknown, [], 'variables the gateway config schema does not know');
      assert.ok(gateway.load, 'the gateway exports loadGatewayConfig');
      // The rendered values themselves pass the gateway's validation (addresses, URLs, CIDRs, JSON).
      gateway.load(containerEnvironment(container));
    });

    test('every env var the chart sets on a worker is one its config knows, the ones it needs are set, and it loads (workers that exist)', async (t) => {
      const missing: string[] = [];
      for (const worker of expected.workers) {
        const config = await serviceConfig(worker);
        if (!config) {
          missing.push(worker);
          continue;
        }
        const container = mainContainer(deploymentOf(render(name), worker)!);
        assert.deepEqual(
          envNames(container).filter((n) => !knows(config.envVars, n)),
          [],
          `${worker}: variables its config schema does not know`,
        );
        const needed = [...setOnWorker(worker), ...(chartSetsOn[worker] ?? [])];
        assert.deepEqual(
          needed.filter((n) => !sets(container, n)),
          [],
          `${worker}: variables the chart must set`,
        );
        // The rendered values pass the worker's own validation (ports, URLs, object store pairing).
        if (config.load) config.load(containerEnvironment(container));
      }
      if (expected.workers.length === 0) t.skip('no worker enabled in this case');
      else if (missing.length === expected.workers.length)
        t.skip(`no worker service exists yet (${missing.join(', ')})`);
      else if (missing.length > 0) t.diagnostic(`not checked, no service yet: ${missing.join(', ')}`);
    });

    test('workers: native gRPC readiness and liveness probes on 50051, startupProbe for model workers, preStop drain for the workers the gateway calls', () => {
      const objects = render(name);
      for (const worker of expected.workers) {
        const d = deploymentOf(objects, worker)!;
        const c = mainContainer(d);
        assert.equal(c.readinessProbe?.grpc?.port, 50051, `${worker} readiness`);
        assert.equal(c.livenessProbe?.grpc?.port, 50051, `${worker} liveness`);
        assert.deepEqual(
          c.ports?.find((p) => p.name === 'grpc'),
          { name: 'grpc', containerPort: 50051, protocol: 'TCP' },
        );
        // A drain only where callers must let go of the pod first; the animation worker has none
        // (it pulls its jobs, and stops pulling on SIGTERM).
        if (grpcWorkers.includes(worker))
          assert.ok(c.lifecycle?.preStop?.exec?.command[0] === 'sleep', `${worker} preStop drain`);
        else assert.equal(c.lifecycle?.preStop, undefined, `${worker}: nothing to drain`);
        if (modelWorkers.includes(worker)) {
          assert.equal(c.startupProbe?.grpc?.port, 50051, `${worker} startupProbe`);
          const budget = (c.startupProbe.periodSeconds ?? 10) * (c.startupProbe.failureThreshold ?? 3);
          assert.ok(budget >= 300, `${worker}: the startup probe allows ${budget}s for model loading`);
          assert.ok(envNames(c).includes('MODEL_DIR'), `${worker}: MODEL_DIR`);
        }
        const service = ofKind(objects, 'Service').find((s) => componentOf(s) === worker);
        assert.equal(
          (service?.spec as { clusterIP?: string }).clusterIP,
          'None',
          `${worker}: headless Service`,
        );
      }
    });

    test('the drain fits the grace period: preStop sleep (if any), then SHUTDOWN_GRACE_MS for in-flight work (services that exist)', async () => {
      for (const d of ofKind<DeploymentObject>(render(name), 'Deployment')) {
        const component = componentOf(d)!;
        const config = await serviceConfig(component);
        if (!config?.load) continue; // the service does not exist yet
        const c = mainContainer(d);
        const { shutdownGraceMs } = config.load(containerEnvironment(c)) as { shutdownGraceMs: number };
        const preStop = c.lifecycle?.preStop?.exec?.command;
        if (preStop) assert.equal(preStop[0], 'sleep', `${component}: preStop sleeps`);
        const sleep = Number(preStop?.[1] ?? 0);
        const grace = d.spec.template.spec.terminationGracePeriodSeconds ?? 30;
        assert.ok(
          sleep + shutdownGraceMs / 1000 <= grace,
          `${component}: ${sleep} s preStop + ${shutdownGraceMs / 1000} s SHUTDOWN_GRACE_MS exceed terminationGracePeriodSeconds ${grace}`,
        );
      }
    });

    test('gateway: HTTP probes /healthz (liveness) and /readyz (readiness)', () => {
      const c = mainContainer(deploymentOf(render(name), 'gateway')!);
      assert.equal(c.livenessProbe?.httpGet?.path, '/healthz');
      assert.equal(c.readinessProbe?.httpGet?.path, '/readyz');
    });

    test(`GPU limits and tolerations only where gpu.enabled (${expected.gpu.join(', ') || 'none'})`, () => {
      const objects = render(name);
      for (const d of ofKind<DeploymentObject>(objects, 'Deployment')) {
        const component = componentOf(d) as WorkerName;
        const wantsGpu = expected.gpu.includes(component);
        const pod = d.spec.template.spec;
        const c = mainContainer(d);
        assert.equal(
          c.resources?.limits?.['nvidia.com/gpu'],
          wantsGpu ? 1 : undefined,
          `${component} GPU limit`,
        );
        assert.equal(
          (pod.tolerations ?? []).some((t) => t.key === 'nvidia.com/gpu' && t.effect === 'NoSchedule'),
          wantsGpu,
          `${component} GPU toleration`,
        );
        if (modelWorkers.includes(component)) {
          const providers = c.env?.find((e) => e.name === 'ORT_EXECUTION_PROVIDERS')?.value;
          assert.equal(providers, wantsGpu ? 'cuda,cpu' : 'cpu', `${component} ORT providers`);
        }
      }
      if (expected.gpu.length === 0) assert.doesNotMatch(JSON.stringify(objects), /nvidia\.com\/gpu/);
    });

    test(`KEDA ScaledObjects ${expected.keda ? 'for exactly the enabled workers' : 'absent'}`, () => {
      const objects = render(name);
      const scaled = ofKind(objects, 'ScaledObject').map(componentOf).sort();
      assert.deepEqual(scaled, expected.keda ? [...expected.workers].sort() : []);
      for (const worker of expected.workers) {
        const replicas = deploymentOf(objects, worker)!.spec.replicas;
        assert.equal(
          replicas === undefined,
          expected.keda,
          `${worker}: replicas left to KEDA only when it scales`,
        );
      }
    });

    test('CLUSTER_SECRET reaches the gateway and every worker from one Secret, never as a literal', () => {
      const objects = render(name);
      const deployments = ofKind<DeploymentObject>(objects, 'Deployment');
      for (const d of deployments.filter((d) => componentOf(d) === 'webhooks')) {
        assert.equal(secretRef(d, 'CLUSTER_SECRET'), undefined, 'the webhook sender has no gRPC peer');
      }
      const refs = deployments
        .filter((d) => componentOf(d) !== 'webhooks')
        .map((d) => {
          assert.ok(
            !envNames(mainContainer(d)).includes('CLUSTER_SECRET'),
            `${d.metadata.name}: not a literal`,
          );
          const ref = secretRef(d, 'CLUSTER_SECRET');
          assert.ok(ref, `${d.metadata.name}: CLUSTER_SECRET_FILE, from a Secret`);
          return ref;
        });
      assert.equal(new Set(refs.map((r) => JSON.stringify(r))).size, 1, 'the same Secret everywhere');
      const given = expected.options.values
        ?.map((v) => (v as { clusterAuth?: { existingSecret?: string } }).clusterAuth?.existingSecret)
        .filter(Boolean)
        .at(-1);
      assert.deepEqual(ofKind(objects, 'Secret'), [], 'never rendered: the hook Job creates it');
      const generated = generatedSecrets(objects).filter((s) => s.name.endsWith('-cluster-secret'));
      if (given) {
        assert.equal(refs[0]!.name, given);
        assert.deepEqual(generated, [], 'nothing generated beside an existing Secret');
        return;
      }
      assert.deepEqual(
        generated,
        [{ name: refs[0]!.name, key: 'secret', length: 48 }],
        "the release's hook creates it",
      );
    });

    test('Secrets reach Switchboard containers only as read-only files of one projected volume, each its own', () => {
      for (const d of ofKind<DeploymentObject>(render(name), 'Deployment')) {
        const component = componentOf(d)!;
        const pod = d.spec.template.spec;
        const c = mainContainer(d);
        const where = `${d.metadata.name}`;
        assert.deepEqual(
          (c.env ?? []).filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.name),
          [],
          `${where}: no Secret in the environment`,
        );
        const files = Object.values(secretsOf(d));
        assert.ok(files.length > 0, where);
        for (const file of files) {
          assert.match(file.path, /^\/var\/run\/secrets\/switchboard\/[a-z0-9-]+$/, `${where}: ${file.name}`);
          assert.ok(file.readOnly, `${where}: ${file.name} mounted read-only`);
          // Readable by the pod's group (fsGroup) at most; nobody else, and never writable.
          assert.ok(
            [0o440, 0o400].includes(file.mode),
            `${where}: ${file.name} mode ${file.mode.toString(8)}`,
          );
          assert.ok(!envNames(c).includes(file.name), `${where}: ${file.name} as a value too`);
        }
        assert.ok((pod.securityContext?.fsGroup ?? 0) > 0, `${where}: an fsGroup owns the files`);
        // The volume holds only what some _FILE variable names: nothing another component needs.
        const volume = pod.volumes!.find((v) => v.name === 'secrets')!;
        const items = volume.projected!.sources.flatMap((s) => s.secret!.items!.map((i) => i.path));
        assert.deepEqual(
          items.sort(),
          files.map((f) => f.path.split('/').at(-1)!).sort(),
          `${where}: exactly the files it reads`,
        );
        // The brokers: a NATS user for NATS clients, a Redis user for Redis clients, nothing else.
        const nats = (natsRoles as readonly string[]).includes(component);
        const redis = (redisRoles as readonly string[]).includes(component);
        for (const variable of ['NATS_URL', 'NATS_USER', 'NATS_PASSWORD'])
          assert.equal(sets(c, variable), nats, `${where}: ${variable}`);
        for (const variable of ['REDIS_URL', 'REDIS_USER', 'REDIS_PASSWORD'])
          assert.equal(sets(c, variable), redis, `${where}: ${variable}`);
        if (nats)
          assert.equal(secretRef(d, 'NATS_PASSWORD')?.key, component, `${where}: its own NATS password`);
        if (redis)
          assert.equal(secretRef(d, 'REDIS_PASSWORD')?.key, component, `${where}: its own Redis password`);
        for (const init of pod.initContainers ?? []) {
          // The MinIO client (models sync) reads its keys from its environment: the only exception.
          assert.equal(init.name, 'sync-models', `${where}: ${init.name}`);
          assert.deepEqual(
            (init.env ?? []).filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.name),
            envNames(init).filter((n) => n === 'S3_ACCESS_KEY' || n === 'S3_SECRET_KEY'),
          );
        }
      }
    });

    test("the gateway's Service exposes only HTTP; metrics are scraped from the pods", () => {
      const objects = render(name);
      const services = ofKind(objects, 'Service').filter((s) => componentOf(s) === 'gateway');
      assert.equal(services.length, 1);
      const ports = (services[0]!.spec as { ports: { name: string; port: number }[] }).ports;
      assert.deepEqual(
        ports.map((p) => p.name),
        ['http'],
      );
      const gateway = deploymentOf(objects, 'gateway')!;
      const annotations = (gateway.spec.template.metadata as { annotations?: Record<string, string> })
        .annotations;
      assert.equal(annotations?.['prometheus.io/scrape'], 'true');
      assert.equal(annotations?.['prometheus.io/port'], '9464');
      assert.ok(mainContainer(gateway).ports!.some((p) => p.name === 'metrics' && p.containerPort === 9464));
    });

    test(`NetworkPolicies ${expected.networkPolicies ? 'deny by default for every component' : 'absent'}`, () => {
      const objects = render(name);
      const policies = ofKind(objects, 'NetworkPolicy');
      if (!expected.networkPolicies) {
        assert.equal(policies.length, 0);
        return;
      }
      for (const d of ofKind<DeploymentObject>(objects, 'Deployment')) {
        const applying = policiesFor(objects, d.spec.template.metadata.labels);
        const deny = applying.find((p) => p.metadata.name.endsWith('-default-deny'));
        assert.ok(deny, `${d.metadata.name}: a default-deny policy`);
        assert.deepEqual(deny.spec.policyTypes, ['Ingress', 'Egress']);
        assert.equal(deny.spec.ingress, undefined);
        assert.equal(deny.spec.egress, undefined);
      }
    });
  });
}

describe('chart: network policies', () => {
  const objects = () => render('network policies on');
  const labelsOf = (component: string) => deploymentOf(objects(), component)!.spec.template.metadata.labels;

  test('the browser reaches the internet but not private, shared, link-local or cluster ranges', () => {
    const browser = policiesFor(objects(), labelsOf('browser'));
    const internet = browser.find((p) => p.metadata.name.endsWith('-egress-internet'));
    assert.ok(internet);
    const v4 = internet.spec.egress![0]!.to!.find((peer) => peer.ipBlock?.cidr === '0.0.0.0/0')!.ipBlock!;
    for (const range of [
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      '169.254.0.0/16',
      '100.64.0.0/10',
      '10.96.0.0/12',
      '10.244.0.0/16',
      '198.18.0.0/15',
    ]) {
      assert.ok(v4.except?.includes(range), `except ${range}`);
    }
    const v6 = internet.spec.egress![0]!.to!.find((peer) => peer.ipBlock?.cidr === '::/0')!.ipBlock!;
    for (const range of ['fc00::/7', 'fe80::/10', 'fd00:10:96::/112']) assert.ok(v6.except?.includes(range));

    // Over every policy selecting the browser pod: public addresses yes, the rest no.
    for (const ip of ['93.184.216.34', '8.8.8.8', '1.1.1.1']) assert.ok(egressAllowsAddress(browser, ip), ip);
    for (const ip of [
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '198.19.255.1',
    ]) {
      assert.ok(!egressAllowsAddress(browser, ip), `browser must not reach ${ip}`);
    }
  });

  test('no other component has internet egress (animation without the avatar back-end included)', () => {
    for (const component of ['gateway', 'llm', 'whisper', 'diffusion', 'animation']) {
      const applying = policiesFor(objects(), labelsOf(component));
      assert.ok(!egressAllowsAddress(applying, '93.184.216.34'), `${component} reaches the internet`);
      assert.ok(
        !egressAllowsAddress(applying, '169.254.169.254'),
        `${component} reaches the metadata service`,
      );
    }
  });

  test('workers accept connections only from the gateway (animation: from no one); the gateway from anywhere', () => {
    for (const worker of workerNames) {
      const ingress = policiesFor(objects(), labelsOf(worker)).flatMap((p) => p.spec.ingress ?? []);
      assert.ok(
        ingress.every((rule) => rule.from && rule.from.length > 0),
        `${worker}: every ingress rule names its peers`,
      );
      const grpcRules = ingress.filter((rule) => JSON.stringify(rule.ports).includes('"grpc"'));
      if (!grpcWorkers.includes(worker)) {
        // The gateway never calls it; the kubelet's probes come from the node.
        assert.deepEqual(grpcRules, [], `${worker}: no rule opens its gRPC port`);
        continue;
      }
      assert.equal(grpcRules.length, 1);
      assert.deepEqual(grpcRules[0]!.from, [
        {
          podSelector: {
            matchLabels: {
              'app.kubernetes.io/name': 'switchboard',
              'app.kubernetes.io/component': 'gateway',
            },
          },
        },
      ]);
    }
    const gatewayIngress = policiesFor(objects(), labelsOf('gateway')).flatMap((p) => p.spec.ingress ?? []);
    assert.ok(
      gatewayIngress.some((rule) => rule.from === undefined && JSON.stringify(rule.ports).includes('"http"')),
    );
  });
});

describe('chart: network policies by default (workers trust only the gateway)', () => {
  // No networkPolicies values at all: what an operator gets from `helm install` as it is.
  const objects = () => render('every worker enabled');
  const labelsOf = (component: string) => deploymentOf(objects(), component)!.spec.template.metadata.labels;
  /** A pod of the same namespace that is not Switchboard's (any other workload, or an intruder). */
  const rogue = { app: 'rogue', 'app.kubernetes.io/name': 'something-else' };
  const grpc = { name: 'grpc', number: 50051 };
  const devtools = { name: 'devtools', number: 9223 };
  const metrics = { name: 'metrics', number: 9464 };

  test('the gateway reaches every worker it calls over gRPC, and the browser relay; no other pod does', () => {
    for (const worker of workerNames) {
      assert.equal(
        connectionAllowed(objects(), labelsOf('gateway'), labelsOf(worker), grpc),
        grpcWorkers.includes(worker),
        `gateway -> ${worker} (animation takes jobs from JetStream: not called)`,
      );
      assert.ok(
        !connectionAllowed(objects(), rogue, labelsOf(worker), grpc),
        `another pod -> ${worker} gRPC`,
      );
      for (const other of workerNames) {
        assert.ok(
          !connectionAllowed(objects(), labelsOf(other), labelsOf(worker), grpc),
          `${other} -> ${worker} gRPC`,
        );
      }
    }
    assert.ok(connectionAllowed(objects(), labelsOf('gateway'), labelsOf('browser'), devtools));
    assert.ok(!connectionAllowed(objects(), rogue, labelsOf('browser'), devtools), 'another pod -> relay');
    for (const other of ['llm', 'whisper', 'diffusion', 'animation', 'browser']) {
      assert.ok(
        !connectionAllowed(objects(), labelsOf(other), labelsOf('browser'), devtools),
        `${other} -> relay`,
      );
    }
    assert.ok(connectionAllowed(objects(), rogue, labelsOf('gateway'), { name: 'http', number: 8080 }));
  });

  test('metrics ports admit only networkPolicies.metricsFrom (the monitoring namespace by default)', () => {
    const monitoring = [
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
    ];
    for (const component of ['gateway', ...workerNames]) {
      const rules = policiesFor(objects(), labelsOf(component))
        .flatMap((p) => p.spec.ingress ?? [])
        .filter((rule) =>
          (rule.ports ?? []).some((p) => p.port === metrics.name || p.port === metrics.number),
        );
      assert.equal(rules.length, 1, `${component}: one rule opens the metrics port`);
      assert.deepEqual(rules[0]!.from, monitoring, `${component}: from Prometheus only`);
      assert.ok(
        !connectionAllowed(objects(), rogue, labelsOf(component), metrics),
        `another pod -> ${component} metrics`,
      );
      assert.ok(
        !connectionAllowed(objects(), labelsOf('gateway'), labelsOf(component), metrics) ||
          component === 'gateway',
        `gateway -> ${component} metrics`,
      );
    }
    const rendered = helmTemplate({
      values: [
        allWorkers,
        { networkPolicies: { metricsFrom: [{ podSelector: { matchLabels: { app: 'prom' } } }] } },
      ],
    });
    const prometheus = { app: 'prom' };
    for (const component of ['gateway', ...workerNames]) {
      const labels = deploymentOf(rendered, component)!.spec.template.metadata.labels;
      assert.ok(
        connectionAllowed(rendered, prometheus, labels, metrics),
        `prometheus -> ${component} metrics`,
      );
      assert.ok(!connectionAllowed(rendered, prometheus, labels, grpc), `prometheus -> ${component} gRPC`);
    }
  });

  test('browser pods send only DNS, infrastructure traffic and public-internet traffic', () => {
    const browser = policiesFor(objects(), labelsOf('browser'));
    const infraPorts = [4222, 6379, 9000];
    for (const rule of browser.flatMap((p) => p.spec.egress ?? [])) {
      const peers = rule.to ?? [];
      assert.ok(peers.length > 0, 'every egress rule names its peers');
      if (peers.every((peer) => peer.ipBlock)) {
        // The internet rule: everything but private, shared, link-local (and cluster) ranges.
        for (const peer of peers) assert.ok((peer.ipBlock!.except ?? []).length > 0, peer.ipBlock!.cidr);
        continue;
      }
      const ports = (rule.ports ?? []).map((p) => p.port);
      assert.ok(ports.length > 0, `a rule to pods names its ports: ${JSON.stringify(rule)}`);
      assert.ok(
        ports.every((port) => port === 53 || port === 5353 || infraPorts.includes(port as number)),
        `only DNS (53, and OpenShift's 5353) and infrastructure ports: ${JSON.stringify(ports)}`,
      );
    }
    for (const component of ['gateway', ...workerNames]) {
      for (const port of [grpc, devtools, metrics, { name: 'http', number: 8080 }]) {
        assert.ok(
          !connectionAllowed(objects(), labelsOf('browser'), labelsOf(component), port),
          `browser -> ${component} ${port.name}`,
        );
      }
    }
    for (const ip of ['10.1.2.3', '169.254.169.254', '192.168.1.1']) {
      assert.ok(!egressAllowsAddress(browser, ip), `browser must not reach ${ip}`);
    }
    assert.ok(egressAllowsAddress(browser, '93.184.216.34'));
  });
});

/** The Secrets the release's hook Job creates (its ConfigMap's secrets.json): test/integration/helm-gitops.test.ts. */
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

describe('chart: cluster secret', () => {
  const refOf = (objects: K8sObject[], component: string) =>
    secretRef(deploymentOf(objects, component)!, 'CLUSTER_SECRET');

  test('is created once by the hook Job, never rendered, so renders and syncs never rotate it', () => {
    const objects = render('defaults');
    assert.deepEqual(ofKind(objects, 'Secret'), []);
    assert.deepEqual(
      generatedSecrets(objects).find((s) => s.name === 'sb-switchboard-cluster-secret'),
      { name: 'sb-switchboard-cluster-secret', key: 'secret', length: 48 },
    );
    assert.deepEqual(refOf(objects, 'gateway'), { name: 'sb-switchboard-cluster-secret', key: 'secret' });
  });

  test('clusterAuth.existingSecret replaces the generated Secret for every workload', () => {
    const objects = helmTemplate({
      values: [allWorkers, { clusterAuth: { existingSecret: 'ops-cluster', existingSecretKey: 'value' } }],
    });
    assert.deepEqual(ofKind(objects, 'Secret'), []);
    assert.deepEqual(
      generatedSecrets(objects)
        .map((s) => s.name)
        .sort(),
      ['sb-switchboard-admin-token', 'sb-switchboard-key-pepper', 'sb-switchboard-webhook-secrets-key'],
    );
    // The webhook sender has no gRPC peer, so no cluster secret.
    for (const component of ['gateway', ...workerNames.filter((w) => w !== 'webhooks')]) {
      assert.deepEqual(refOf(objects, component), { name: 'ops-cluster', key: 'value' }, component);
    }
  });

  test("a release with workers only (skaffold's modules) creates the shared Secret when no release has", () => {
    const options = { valuesFiles: [join(valuesDir, 'dev.yaml')], values: [{ llm: { enabled: true } }] };
    const objects = helmTemplate(options);
    assert.deepEqual(ofKind(objects, 'Secret'), []);
    assert.deepEqual(refOf(objects, 'llm'), { name: 'switchboard-cluster-secret', key: 'secret' });
    assert.deepEqual(generatedSecrets(objects), [
      { name: 'switchboard-cluster-secret', key: 'secret', length: 48 },
    ]);
    const gatewayRelease = helmTemplate({
      valuesFiles: [join(valuesDir, 'dev.yaml')],
      values: [{ gateway: { enabled: true } }],
    });
    assert.ok(generatedSecrets(gatewayRelease).some((s) => s.name === 'switchboard-cluster-secret'));
    assert.match(helmNotes(options), /Generated Secrets \(switchboard-cluster-secret\): the hook Job/);
  });
});

describe('chart: key pepper', () => {
  /** KEY_PEPPER_FILE of the gateway, resolved to the Secret item mounted there. */
  const pepperMount = (objects: K8sObject[]) => secretsOf(deploymentOf(objects, 'gateway')!).KEY_PEPPER;

  test('reaches the gateway only, as a file from a Secret the hook Job creates once', () => {
    const objects = render('defaults');
    const pepper = pepperMount(objects);
    assert.ok(pepper?.readOnly, 'mounted read-only');
    assert.deepEqual([pepper.secret, pepper.key], ['sb-switchboard-key-pepper', 'pepper']);
    for (const d of ofKind<DeploymentObject>(render('every worker enabled'), 'Deployment')) {
      const names = envNames(mainContainer(d));
      assert.ok(!names.includes('KEY_PEPPER'), `${d.metadata.name}: never in the environment`);
      assert.equal(names.includes('KEY_PEPPER_FILE'), componentOf(d) === 'gateway', d.metadata.name);
    }
    const generated = generatedSecrets(objects).find((s) => s.name === 'sb-switchboard-key-pepper');
    assert.deepEqual(generated, { name: 'sb-switchboard-key-pepper', key: 'pepper', length: 64 });
    assert.ok(generated.length >= 32, 'at least 32 characters');
  });

  test('keyPepper.existingSecret replaces the generated Secret; a literal in gateway.env is refused', () => {
    const objects = render('external infra URLs and secrets');
    assert.equal(pepperMount(objects)?.secret, 'sb-key-pepper');
    assert.ok(!generatedSecrets(objects).some((s) => s.name.endsWith('-key-pepper')));
    for (const name of ['KEY_PEPPER', 'KEY_PEPPER_FILE']) {
      assert.match(
        helmTemplateFailure({ values: [{ gateway: { env: { [name]: 'p'.repeat(40) } } }] }),
        new RegExp(`gateway\\.env\\.${name}`),
      );
    }
  });
});

describe('chart: broker credentials (NATS and Redis users)', () => {
  /** Without the test file's credentials: what an operator's values alone give. */
  const bare = (values: object[]): RenderOptions => ({ defaults: [], values });
  const noAuth = { nats: { auth: { required: false } }, redis: { auth: { required: false } } };
  const value = (c: Container, name: string) => c.env?.find((e) => e.name === name)?.value;

  test('a NATS or Redis client without its credentials Secret does not render; the message says what to set', () => {
    assert.match(chartFailure(bare([])), /nats\.auth\.existingSecret: gateway connects to NATS as a user/);
    assert.match(
      chartFailure(bare([{ nats: { auth: { existingSecret: 'sb-nats-users' } } }])),
      /redis\.auth\.existingSecret: gateway connects to Redis as an ACL user.*redis\.auth\.required: false/,
    );
    for (const worker of ['browser', 'animation']) {
      assert.match(
        chartFailure(bare([{ gateway: { enabled: false }, [worker]: { enabled: true } }])),
        new RegExp(`nats\\.auth\\.existingSecret: ${worker} connects to NATS.*nats\\.auth\\.required: false`),
      );
    }
    // The model workers never connect to either: a release of them alone needs no credentials.
    const models = renderChart(
      bare([{ gateway: { enabled: false }, llm: { enabled: true }, whisper: { enabled: true } }]),
    );
    assert.deepEqual(ofKind(models, 'Deployment').map(componentOf).sort(), ['llm', 'whisper']);
  });

  test('the documented opt-out (auth.required: false) renders without credentials, and the notes warn', () => {
    const objects = renderChart(bare([allWorkers, noAuth]));
    assert.deepEqual(objects.flatMap(k8sProblems), []);
    for (const d of ofKind<DeploymentObject>(objects, 'Deployment')) {
      const c = mainContainer(d);
      for (const variable of ['NATS_USER', 'NATS_PASSWORD', 'REDIS_USER', 'REDIS_PASSWORD'])
        assert.ok(!sets(c, variable), `${d.metadata.name}: ${variable}`);
    }
    assert.equal(value(mainContainer(deploymentOf(objects, 'browser')!), 'NATS_URL'), 'nats://nats:4222');
    assert.equal(lintChart(bare([noAuth])).status, 0);
    const notes = chartNotes(bare([{ browser: { enabled: true } }, noAuth]));
    assert.match(notes, /WARNING: nats\.auth\.required is false: gateway, browser connect to NATS without/);
    assert.match(notes, /WARNING: redis\.auth\.required is false: the gateway connects to Redis without/);
    assert.doesNotMatch(helmNotes({ values: [{ browser: { enabled: true } }] }), /auth\.required is false/);
  });

  test('each component gets exactly the Secrets it needs, and the NATS and Redis users of its own role', async () => {
    const objects = render('everything on');
    const s3 = ['S3_ACCESS_KEY', 'S3_SECRET_KEY'];
    const webhook = ['WEBHOOK_SECRETS_KEY'];
    const expected: Record<string, string[]> = {
      gateway: [
        'CLUSTER_SECRET',
        'ADMIN_TOKEN',
        'KEY_PEPPER',
        'NATS_URL',
        'NATS_PASSWORD',
        'REDIS_URL',
        'REDIS_PASSWORD',
        ...s3,
        ...webhook,
      ],
      llm: ['CLUSTER_SECRET'],
      whisper: ['CLUSTER_SECRET'],
      diffusion: ['CLUSTER_SECRET', ...s3],
      animation: ['CLUSTER_SECRET', 'NATS_URL', 'NATS_PASSWORD', ...s3, 'AVATAR_API_KEY'],
      browser: ['CLUSTER_SECRET', 'NATS_URL', 'NATS_PASSWORD', ...s3],
      webhooks: ['NATS_URL', 'NATS_PASSWORD', ...webhook],
    };
    // The chart's NATS and Redis clients are libs/broker-auth's roles, no more, no fewer.
    assert.deepEqual(
      Object.keys(expected).filter((c) => expected[c]!.includes('NATS_PASSWORD')),
      [...natsRoles].sort((a, b) => (a === 'gateway' ? -1 : b === 'gateway' ? 1 : a.localeCompare(b))),
    );
    assert.deepEqual(
      Object.keys(expected).filter((c) => expected[c]!.includes('REDIS_PASSWORD')),
      [...redisRoles],
    );
    for (const [component, secrets] of Object.entries(expected)) {
      const d = deploymentOf(objects, component)!;
      const c = mainContainer(d);
      assert.deepEqual(Object.keys(secretsOf(d)).sort(), [...secrets].sort(), component);
      if (secrets.includes('NATS_PASSWORD')) {
        assert.equal(value(c, 'NATS_USER'), `sb-${component}`, `${component}: nats.auth.users`);
        assert.deepEqual(secretRef(d, 'NATS_PASSWORD'), { name: 'sb-nats-passwords', key: component });
        assert.deepEqual(secretRef(d, 'NATS_URL'), { name: 'sb-nats', key: 'url' });
      } else {
        assert.deepEqual(
          envNames(c).filter((n) => n.startsWith('NATS_')),
          [],
          `${component} never connects to NATS`,
        );
      }
      if (secrets.includes('REDIS_PASSWORD')) {
        assert.equal(value(c, 'REDIS_USER'), `sb-${component}`, `${component}: redis.auth.users`);
        assert.deepEqual(secretRef(d, 'REDIS_PASSWORD'), { name: 'sb-redis-passwords', key: component });
      } else {
        assert.deepEqual(
          envNames(c).filter((n) => n.startsWith('REDIS_')),
          [],
          `${component} never connects to Redis`,
        );
      }
      // The service reads them as the credentials it presents (libs/broker-auth's env fields).
      const config = await serviceConfig(component);
      const loaded = config?.load?.(containerEnvironment(c)) as
        | { natsCredentials?: { user?: string; password?: string }; redisCredentials?: { user?: string } }
        | undefined;
      if (secrets.includes('NATS_PASSWORD') && loaded) {
        assert.deepEqual(
          loaded.natsCredentials,
          { user: `sb-${component}`, password: standInSecrets.NATS_PASSWORD },
          component,
        );
      }
      if (secrets.includes('REDIS_PASSWORD') && loaded)
        assert.equal(loaded.redisCredentials?.user, `sb-${component}`, component);
    }
  });

  test("a URL in env replaces the chart's, as before; the passwords still come as files", () => {
    const objects = helmTemplate({
      values: [
        { nats: { existingSecret: 'sb-nats' } },
        { gateway: { env: { NATS_URL: 'nats://nats.other.svc:4222' } } },
      ],
    });
    const gateway = deploymentOf(objects, 'gateway')!;
    assert.equal(value(mainContainer(gateway), 'NATS_URL'), 'nats://nats.other.svc:4222');
    assert.equal(secretRef(gateway, 'NATS_URL'), undefined, 'not a file as well');
    assert.ok(secretRef(gateway, 'NATS_PASSWORD'));
  });
});

describe('chart: infrastructure egress follows what each component uses', () => {
  /** NATS, Redis and the object store as the pods of dev-infra's releases. */
  const infra = {
    nats: { labels: { 'app.kubernetes.io/name': 'nats' }, port: { number: 4222 } },
    redis: { labels: { 'app.kubernetes.io/name': 'redis' }, port: { number: 6379 } },
    objectStore: { labels: { app: 'minio' }, port: { number: 9000 } },
  };
  type Destination = keyof typeof infra;
  /** What each component connects to (the brief of docs/security.md, "Between the pods"). */
  const uses: Record<string, Destination[]> = {
    gateway: ['nats', 'redis', 'objectStore'],
    browser: ['nats', 'objectStore'],
    animation: ['nats', 'objectStore'],
    diffusion: ['objectStore'],
    llm: [],
    whisper: [],
    webhooks: ['nats'],
  };
  /** Each destination's peers naming its own pods, so a rule for one cannot open another. */
  const ownPeers = {
    networkPolicies: Object.fromEntries(
      Object.entries(infra).map(([destination, { labels, port }]) => [
        destination,
        [{ to: [{ podSelector: { matchLabels: labels } }], ports: [{ port: port.number, protocol: 'TCP' }] }],
      ]),
    ),
  };
  const labelsIn = (objects: K8sObject[], component: string) =>
    deploymentOf(objects, component)!.spec.template.metadata.labels;

  test("NATS for libs/broker-auth's NATS roles, Redis for its Redis roles, the object store where files are stored", () => {
    assert.deepEqual(
      Object.keys(uses).filter((c) => uses[c]!.includes('nats')),
      ['gateway', ...natsRoles.filter((r) => r !== 'gateway')],
    );
    assert.deepEqual(
      Object.keys(uses).filter((c) => uses[c]!.includes('redis')),
      [...redisRoles],
    );
    const values = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as unknown;
    assert.deepEqual(
      workerNames.filter((w) => uses[w]!.includes('objectStore')),
      workerNames.filter((w) => getPath(values, `${w}.usesObjectStore`) === true),
    );
  });

  test('by default (any pod of the namespace on the standard ports): each component only on the ports it uses', () => {
    const objects = render('every worker enabled');
    for (const [component, destinations] of Object.entries(uses)) {
      for (const [destination, { labels, port }] of Object.entries(infra)) {
        assert.equal(
          connectionAllowed(objects, labelsIn(objects, component), labels, port),
          destinations.includes(destination as Destination),
          `${component} -> ${destination} (${port.number})`,
        );
      }
    }
  });

  test('with a peer list per destination, a component reaches exactly the pods of what it uses', () => {
    const objects = helmTemplate({ values: [allWorkers, ownPeers] });
    assert.deepEqual(objects.flatMap(k8sProblems), []);
    for (const [component, destinations] of Object.entries(uses)) {
      for (const [destination, { labels }] of Object.entries(infra)) {
        for (const [other, { port }] of Object.entries(infra)) {
          assert.equal(
            connectionAllowed(objects, labelsIn(objects, component), labels, port),
            destination === other && destinations.includes(destination as Destination),
            `${component} -> ${destination} pods on ${port.number}`,
          );
        }
      }
    }
  });

  test('model workers that sync their models from the object store reach it; the others still reach nothing', () => {
    const objects = render('models synced from the object store');
    for (const worker of workerNames) {
      const wanted = [...uses[worker]!, ...(modelWorkers.includes(worker) ? ['objectStore'] : [])];
      for (const [destination, { labels, port }] of Object.entries(infra)) {
        assert.equal(
          connectionAllowed(objects, labelsIn(objects, worker), labels, port),
          wanted.includes(destination),
          `${worker} -> ${destination}`,
        );
      }
    }
  });
});

describe('chart: object store credentials per component', () => {
  const sync = { models: { sync: { enabled: true, image: { tag: 'RELEASE.2025-01-01T00-00-00Z' } } } };
  const s3Refs = (d: DeploymentObject) => [secretRef(d, 'S3_ACCESS_KEY'), secretRef(d, 'S3_SECRET_KEY')];
  const syncSecret = (d: DeploymentObject) =>
    d.spec.template.spec.initContainers
      ?.find((c) => c.name === 'sync-models')
      ?.env?.filter((e) => e.name.startsWith('S3_') && e.valueFrom)
      .map((e) => e.valueFrom!.secretKeyRef!.name);

  test("s3.componentSecrets gives each component its own Secret (the model sync the worker's own)", () => {
    const componentSecrets = {
      gateway: 'sb-s3-gateway',
      browser: 'sb-s3-browser',
      diffusion: 'sb-s3-diffusion',
      animation: 'sb-s3-animation',
      llm: 'sb-s3-models',
      whisper: 'sb-s3-models',
    };
    const objects = helmTemplate({ values: [allWorkers, sync, { s3: { componentSecrets } }] });
    assert.deepEqual(objects.flatMap(k8sProblems), []);
    for (const [component, secret] of Object.entries(componentSecrets)) {
      const d = deploymentOf(objects, component)!;
      const usesObjectStore = component === 'gateway' || !['llm', 'whisper'].includes(component);
      assert.deepEqual(
        s3Refs(d),
        usesObjectStore
          ? [
              { name: secret, key: 'accessKey' },
              { name: secret, key: 'secretKey' },
            ]
          : [undefined, undefined],
        component,
      );
      if (usesObjectStore)
        assert.ok(envNames(mainContainer(d)).includes('S3_ENDPOINT'), `${component}: S3 is on`);
      if (modelWorkers.includes(component as WorkerName))
        assert.deepEqual(syncSecret(d), [secret, secret], `${component}: its models sync`);
    }
  });

  test('beside a shared s3.existingSecret, one override changes that component alone', () => {
    const objects = helmTemplate({
      values: [
        allWorkers,
        { s3: { existingSecret: 'sb-s3', componentSecrets: { browser: 'sb-s3-browser' } } },
      ],
    });
    for (const component of ['gateway', 'diffusion', 'animation', 'browser']) {
      const name = component === 'browser' ? 'sb-s3-browser' : 'sb-s3';
      assert.deepEqual(
        s3Refs(deploymentOf(objects, component)!).map((r) => r?.name),
        [name, name],
        component,
      );
    }
  });

  test('with S3 on, a component that stores files without a Secret of its own or a shared one does not render', () => {
    assert.match(
      helmTemplateFailure({
        values: [{ browser: { enabled: true }, s3: { componentSecrets: { browser: 'b' } } }],
      }),
      /s3\.componentSecrets\.gateway: .*gateway has no S3 Secret/,
    );
    assert.match(
      helmTemplateFailure({
        values: [
          { gateway: { enabled: false }, llm: { enabled: true } },
          sync,
          { s3: { componentSecrets: { browser: 'b' } } },
        ],
      }),
      /s3\.componentSecrets\.llm/,
    );
  });
});

describe('deploy/helm/values/infra: the dev-infra brokers enforce libs/broker-auth', () => {
  const read = (file: string) => parse(readFileSync(join(valuesDir, file), 'utf8')) as unknown;
  const nats = read('infra/nats.yaml');
  const redis = read('infra/redis.yaml');
  const dev = read('dev.yaml');
  const chartValues = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as unknown;

  test('infra/nats.yaml and infra/redis.yaml are what deploy/helm/generate-infra-values.mjs writes', () => {
    const result = spawnSync(
      process.execPath,
      [join(repoRoot, 'deploy', 'helm', 'generate-infra-values.mjs'), '--check'],
      { encoding: 'utf8' },
    );
    assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
  });

  test("NATS: a user per role with exactly natsPermissions, the operator's, passwords from dev.yaml's Secret", () => {
    interface NatsUser {
      user: string;
      password: string;
      permissions?: unknown;
    }
    const users = getPath(nats, 'config.merge.authorization.users') as NatsUser[];
    assert.deepEqual(
      users.map((u) => u.user),
      [...natsRoles, 'operator'],
    );
    const secret = getPath(dev, 'nats.auth.existingSecret');
    assert.ok(secret, 'dev.yaml names the NATS credentials Secret');
    for (const [i, role] of [...natsRoles, 'operator'].entries()) {
      const user = users[i]!;
      if (role === 'operator') assert.equal(user.permissions, undefined, 'the operator may do anything');
      else {
        assert.deepEqual(
          user.permissions,
          natsPermissions(role as (typeof natsRoles)[number], defaultResources),
        );
        assert.equal(getPath(chartValues, `nats.auth.users.${role}`), user.user, `the chart's ${role} user`);
      }
      // A nats-server variable ("<< $X >>", unquoted by the nats chart) from the container's env.
      const variable = /^<< \$([A-Z_]+) >>$/.exec(user.password)?.[1];
      assert.ok(variable, `${role}: the password is a variable, never a value`);
      assert.deepEqual(getPath(nats, `container.env.${variable}.valueFrom.secretKeyRef`), {
        name: secret,
        key: role,
      });
    }
    assert.equal(getPath(nats, 'config.jetstream.enabled'), true);
  });

  test("Redis: the gateway's ACL user with exactly redisAclRules over its RATE_LIMIT_PREFIX, passwords from dev.yaml's Secret", async () => {
    interface AclUser {
      username: string;
      enabled: string;
      keys: string;
      channels: string;
      commands: string;
    }
    assert.equal(getPath(redis, 'auth.enabled'), true);
    assert.equal(getPath(redis, 'auth.acl.enabled'), true);
    const secret = getPath(dev, 'redis.auth.existingSecret');
    assert.ok(secret, 'dev.yaml names the Redis credentials Secret');
    assert.equal(getPath(redis, 'auth.acl.userSecret'), secret);
    // The default user (the chart's health checks) has the operator's password, given to no service.
    assert.equal(getPath(redis, 'auth.existingSecret'), secret);
    assert.equal(getPath(redis, 'auth.existingSecretPasswordKey'), 'operator');
    const users = getPath(redis, 'auth.acl.users') as AclUser[];
    assert.deepEqual(
      users.map((u) => u.username),
      [...redisRoles],
    );
    const gateway = await serviceConfig('gateway');
    const container = mainContainer(deploymentOf(render('defaults'), 'gateway')!);
    const { rateLimitPrefix } = gateway!.load!(containerEnvironment(container)) as {
      rateLimitPrefix: string;
    };
    for (const user of users) {
      assert.equal(user.enabled, 'on');
      assert.equal(getPath(chartValues, `redis.auth.users.${user.username}`), user.username);
      // Bitnami writes `user <name> on #<sha256> <keys> <channels> <commands>`.
      const rules = [user.keys, user.channels, user.commands].join(' ').split(' ');
      const pattern = rules.find((r) => r.startsWith('~'))!;
      assert.ok(
        rateLimitPrefix.startsWith(pattern.slice(1, -1)) && pattern.endsWith('*'),
        `${pattern} covers RATE_LIMIT_PREFIX ${rateLimitPrefix}`,
      );
      const wanted = redisAclRules(user.username as (typeof redisRoles)[number], pattern.slice(1, -1));
      assert.deepEqual([...rules].sort(), [...wanted].sort());
      // Order matters among command rules (-@all first, -@dangerous after the grants).
      assert.deepEqual(
        user.commands.split(' '),
        wanted.filter((r) => /^[+-]/.test(r)),
      );
    }
  });

  test('MinIO and the Switchboard releases share one root Secret; no infra values file holds a password', () => {
    const minio = read('infra/minio.yaml');
    assert.equal(getPath(dev, 's3.existingSecret'), getPath(minio, 'existingSecret'));
    assert.deepEqual(
      [getPath(dev, 's3.accessKeyKey'), getPath(dev, 's3.secretKeyKey')],
      ['rootUser', 'rootPassword'],
    );
    assert.deepEqual(getPath(minio, 'users'), [], 'no chart default user (its well-known password)');
    for (const file of ['infra/nats.yaml', 'infra/redis.yaml', 'infra/minio.yaml', 'dev.yaml']) {
      const text = readFileSync(join(valuesDir, file), 'utf8');
      assert.doesNotMatch(text, /^\s*(rootPassword|password|secretKey):(?!\s*'<< \$)/m, file);
    }
  });
});

describe('chart: browser worker', () => {
  const withBrowser = Object.entries(matrix)
    .filter(([, c]) => c.workers.includes('browser'))
    .map(([name]) => name);
  const browserOf = (objects: K8sObject[]) => deploymentOf(objects, 'browser')!;
  const envEntry = (c: Container, name: string) => c.env?.find((e) => e.name === name);
  interface LoadedBrowserConfig {
    advertiseHost: string;
    grpc: { port: number };
    devtools: { port: number; host: string };
    chromiumPath: string;
    objectStore: { s3?: { endpoint: string; bucket: string }; directory: string };
  }
  async function loadBrowser(env: Record<string, string>): Promise<LoadedBrowserConfig> {
    const config = await serviceConfig('browser');
    assert.ok(config?.load, 'services/browser exports loadBrowserConfig');
    return config.load(env) as LoadedBrowserConfig;
  }

  test('BROWSER_ADVERTISE_HOST is the pod IP (downward API), so the registry holds an address gateways reach', async () => {
    assert.ok(withBrowser.length >= 5);
    for (const name of withBrowser) {
      const c = mainContainer(browserOf(render(name)));
      assert.deepEqual(
        envEntry(c, 'BROWSER_ADVERTISE_HOST'),
        { name: 'BROWSER_ADVERTISE_HOST', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        name,
      );
      const loaded = await loadBrowser(containerEnvironment(c));
      assert.equal(loaded.advertiseHost, standInPodIP, `${name}: the worker advertises the pod IP`);
      // What the worker registers is <pod IP>:<GRPC_PORT> and <pod IP>:<DEVTOOLS_PORT>: both must be
      // the ports the container declares.
      assert.equal(loaded.grpc.port, c.ports!.find((p) => p.name === 'grpc')!.containerPort, name);
      assert.equal(loaded.devtools.port, c.ports!.find((p) => p.name === 'devtools')?.containerPort, name);
    }
  });

  test('an operator literal in env replaces the pod IP, without setting it twice', () => {
    const c = mainContainer(
      browserOf(
        helmTemplate({
          values: [{ browser: { enabled: true, env: { BROWSER_ADVERTISE_HOST: '192.0.2.10' } } }],
        }),
      ),
    );
    assert.deepEqual(
      c.env!.filter((e) => e.name === 'BROWSER_ADVERTISE_HOST'),
      [{ name: 'BROWSER_ADVERTISE_HOST', value: '192.0.2.10' }],
    );
  });

  test('the devtools port is declared on the container and the Service, and passed as DEVTOOLS_PORT', () => {
    for (const name of withBrowser) {
      const objects = render(name);
      const c = mainContainer(browserOf(objects));
      assert.deepEqual(
        c.ports?.find((p) => p.name === 'devtools'),
        { name: 'devtools', containerPort: 9223, protocol: 'TCP' },
        name,
      );
      assert.equal(envEntry(c, 'DEVTOOLS_PORT')?.value, '9223', name);
      const service = ofKind(objects, 'Service').find((s) => componentOf(s) === 'browser')!;
      assert.deepEqual(
        (service.spec as { ports: object[] }).ports.find((p) => (p as { name: string }).name === 'devtools'),
        { name: 'devtools', port: 9223, targetPort: 'devtools', protocol: 'TCP' },
        name,
      );
    }
  });

  test("browser.seccompProfile sets only the browser container's; every other container keeps the pod's RuntimeDefault", () => {
    const localhost = { type: 'Localhost', localhostProfile: 'profiles/chromium.json' };
    const objects = helmTemplate({
      values: [{ llm: { enabled: true }, browser: { enabled: true, seccompProfile: localhost } }],
    });
    assert.deepEqual(mainContainer(browserOf(objects)).securityContext?.seccompProfile, localhost);
    for (const d of ofKind<DeploymentObject>(objects, 'Deployment').filter(
      (d) => componentOf(d) !== 'browser',
    )) {
      assert.deepEqual(d.spec.template.spec.securityContext?.seccompProfile, { type: 'RuntimeDefault' });
      for (const c of allContainers(d.spec.template.spec)) {
        assert.equal(c.securityContext?.seccompProfile, undefined, `${d.metadata.name}/${c.name}`);
      }
    }
  });

  test('listenHost reaches the DevTools relay as well as gRPC', () => {
    const c = mainContainer(
      browserOf(helmTemplate({ values: [{ browser: { enabled: true }, listenHost: '::' }] })),
    );
    assert.equal(envEntry(c, 'GRPC_HOST')?.value, '::');
    assert.equal(envEntry(c, 'DEVTOOLS_HOST')?.value, '::');
    assert.equal(
      envEntry(mainContainer(browserOf(render('every worker enabled'))), 'DEVTOOLS_HOST'),
      undefined,
    );
  });

  test('the browser pod: non-root, read-only root filesystem, no added capability, /tmp and a memory-backed /dev/shm', () => {
    for (const name of withBrowser) {
      const pod = browserOf(render(name)).spec.template.spec;
      const c = mainContainer(browserOf(render(name)));
      assert.equal(pod.securityContext?.runAsNonRoot, true, name);
      assert.equal(c.securityContext?.runAsNonRoot, true, name);
      assert.equal(c.securityContext?.readOnlyRootFilesystem, true, name);
      assert.equal(c.securityContext?.allowPrivilegeEscalation, false, name);
      assert.deepEqual(
        c.securityContext?.capabilities,
        { drop: ['ALL'] },
        `${name}: Chromium's sandbox needs no SYS_ADMIN`,
      );
      // Chromium's sandbox creates user, PID and network namespaces, which RuntimeDefault refuses.
      assert.deepEqual(pod.securityContext?.seccompProfile, { type: 'RuntimeDefault' }, name);
      assert.deepEqual(c.securityContext?.seccompProfile, { type: 'Unconfined' }, name);
      const volumeAt = (path: string) => {
        const mount = c.volumeMounts?.find((m) => m.mountPath === path);
        assert.ok(mount, `${name}: ${path} is mounted`);
        return pod.volumes?.find((v) => v.name === mount.name);
      };
      const tmp = volumeAt('/tmp');
      assert.ok(tmp?.emptyDir?.sizeLimit, `${name}: /tmp is a bounded emptyDir`);
      assert.notEqual(tmp.emptyDir.medium, 'Memory', `${name}: profiles on disk, not in memory`);
      const shm = volumeAt('/dev/shm');
      assert.equal(shm?.emptyDir?.medium, 'Memory', `${name}: /dev/shm is memory-backed`);
      assert.ok(shm.emptyDir.sizeLimit, `${name}: /dev/shm is bounded`);
      for (const variable of ['BROWSER_PROFILE_ROOT', 'OBJECT_STORE_DIR']) {
        const value = envEntry(c, variable)?.value;
        if (value !== undefined)
          assert.match(value, /^\/tmp(\/|$)/, `${name}: ${variable} is on the /tmp volume`);
      }
    }
  });

  test("object store variables are the gateway's: S3 only with s3.existingSecret, else OBJECT_STORE_DIR=/tmp/objects", async () => {
    const objectStoreEnv = (c: Container) =>
      (c.env ?? []).filter((e) => e.name.startsWith('S3_') || e.name === 'OBJECT_STORE_DIR');
    for (const [name, s3] of [
      ['every worker enabled', false],
      ['network policies on', false],
      ['external infra URLs and secrets', true],
      ['skaffold: dev + gpu values, every worker', true],
      ['everything on', true],
    ] as const) {
      const objects = render(name);
      const s3Keys = (d: DeploymentObject) => [secretRef(d, 'S3_ACCESS_KEY'), secretRef(d, 'S3_SECRET_KEY')];
      const gatewayPods = deploymentOf(objects, 'gateway')!;
      const gateway = objectStoreEnv(mainContainer(gatewayPods));
      for (const worker of ['diffusion', 'animation', 'browser'] as const) {
        const d = deploymentOf(objects, worker)!;
        assert.deepEqual(objectStoreEnv(mainContainer(d)), gateway, `${name}: ${worker}`);
        assert.deepEqual(s3Keys(d), s3Keys(gatewayPods), `${name}: ${worker}: the same S3 Secret`);
      }
      const browser = mainContainer(browserOf(objects));
      assert.deepEqual(
        objectStoreEnv(browser).map((e) => e.name),
        s3 ? ['S3_BUCKET', 'S3_ENDPOINT', 'S3_ACCESS_KEY_FILE', 'S3_SECRET_KEY_FILE'] : ['OBJECT_STORE_DIR'],
        name,
      );
      const loaded = await loadBrowser(containerEnvironment(browser));
      assert.equal(loaded.objectStore.s3 !== undefined, s3, `${name}: S3 ${s3 ? 'on' : 'off'}`);
      if (!s3) assert.equal(loaded.objectStore.directory, '/tmp/objects');
    }
  });

  for (const name of ['network policies on', 'everything on']) {
    test(`${name}: the gateway reaches browser pods on gRPC and DevTools; no other pod does`, () => {
      const objects = render(name);
      const labelsOf = (component: string) => deploymentOf(objects, component)!.spec.template.metadata.labels;
      const browser = labelsOf('browser');
      const grpc = { name: 'grpc', number: 50051 };
      const devtools = { name: 'devtools', number: 9223 };
      assert.ok(connectionAllowed(objects, labelsOf('gateway'), browser, grpc), 'gateway → browser gRPC');
      assert.ok(
        connectionAllowed(objects, labelsOf('gateway'), browser, devtools),
        'gateway → browser DevTools',
      );
      for (const other of ['llm', 'whisper', 'diffusion', 'animation', 'browser']) {
        for (const port of [grpc, devtools]) {
          assert.ok(
            !connectionAllowed(objects, labelsOf(other), browser, port),
            `${other} must not reach the browser's ${port.name} port`,
          );
        }
      }
      const ingress = policiesFor(objects, browser).flatMap((p) => p.spec.ingress ?? []);
      const devtoolsRules = ingress.filter((rule) => (rule.ports ?? []).some((p) => p.port === 'devtools'));
      assert.equal(devtoolsRules.length, 1, 'one rule opens the devtools port');
      assert.deepEqual(devtoolsRules[0]!.from, [
        {
          podSelector: {
            matchLabels: {
              'app.kubernetes.io/name': 'switchboard',
              'app.kubernetes.io/component': 'gateway',
            },
          },
        },
      ]);
    });
  }

  test('its image: Debian Chromium without recommends, nothing downloaded, uid 10001, the ports the chart declares', async () => {
    const { build, runtime } = serviceImage('browser');
    const lines = runtime.lines;
    assert.ok(build.lines.some((l) => /--filter "\{services\/browser\}\.\.\."/.test(l)));
    assert.ok(build.lines.some((l) => /tsc -b services\/browser\b/.test(l)));
    assert.match(runtime.base, /^node:\d+-bookworm/, 'installs from Debian');
    for (const install of lines.filter((l) => /apt-get install/.test(l)))
      assert.match(install, /--no-install-recommends/);
    assert.deepEqual(aptPackages(lines), ['chromium', 'fonts-liberation', 'tini']);
    for (const l of dockerInstructions()) {
      assert.doesNotMatch(
        l,
        /playwright(-core)? install|\bcurl\b|\bwget\b|ADD https?:/,
        `downloads nothing: ${l}`,
      );
    }
    assert.deepEqual(
      lines.filter((l) => l.startsWith('USER')),
      ['USER 10001:10001'],
    );
    const env = dockerEnv(lines);
    assert.equal(env.HOME, '/tmp');
    assert.equal(env.CHROMIUM_PATH, '/usr/bin/chromium');
    assert.ok(lines.includes('ENTRYPOINT ["/usr/bin/tini", "--"]'));
    assert.ok(lines.includes('CMD ["node", "dist/main.js"]'));

    // EXPOSE: the worker's own default gRPC port (the chart sets GRPC_PORT), and every other port
    // the chart declares on the container.
    const exposed = dockerExposed(lines);
    const defaults = await loadBrowser({ CLUSTER_SECRET: testClusterSecret });
    const declared = mainContainer(browserOf(render('every worker enabled')))
      .ports!.filter((p) => p.name !== 'grpc')
      .map((p) => p.containerPort);
    assert.deepEqual(
      exposed,
      [defaults.grpc.port, ...declared].sort((a, b) => a - b),
    );
    assert.equal(defaults.chromiumPath, '/usr/bin/chromium');
  });

  test('NOTES.txt explains sticky sessions, and warns when pods cannot share stored files', () => {
    const local = helmNotes({ values: [{ browser: { enabled: true } }] });
    assert.match(
      local,
      /Browser sessions are sticky: each browser pod records its pod IP \(grpc 50051, devtools 9223\)/,
    );
    assert.match(local, /\/api\/browser\/session\/<id>\/devtools/);
    assert.match(local, /WARNING: s3\.existingSecret is empty/);
    const s3 = helmNotes({ values: [{ browser: { enabled: true }, s3: { existingSecret: 'sb-s3' } }] });
    assert.doesNotMatch(s3, /existingSecret is empty/);
  });
});

describe('chart: worker images', () => {
  const chartValues = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as Record<string, unknown>;
  /** Every image of each worker: the CPU one, and the CUDA variant of each model worker. */
  const images = workerNames.flatMap((worker) =>
    imageVariants(worker).map((variant) => ({ worker, variant, image: serviceImage(worker, variant) })),
  );
  const where = (worker: string, variant: Variant) => `SERVICE=${worker} VARIANT=${variant}`;

  test("each image exposes its worker's own default gRPC port and every other port the chart declares", async () => {
    assert.equal(images.length, workerNames.length + modelWorkers.length);
    const objects = render('every worker enabled');
    for (const { worker, variant, image } of images) {
      const config = await serviceConfig(worker);
      assert.ok(config?.load, `services/${worker} exports its config loader`);
      const defaults = config.load({
        CLUSTER_SECRET: testClusterSecret,
        WEBHOOK_SECRETS_KEY: standInSecrets.WEBHOOK_SECRETS_KEY!,
      }) as { grpc: { port: number } };
      const declared = mainContainer(deploymentOf(objects, worker)!)
        .ports!.filter((p) => p.name !== 'grpc')
        .map((p) => p.containerPort);
      assert.deepEqual(
        dockerExposed(image.runtime.lines),
        [defaults.grpc.port, ...declared].sort((a, b) => a - b),
        where(worker, variant),
      );
    }
  });

  test("every variable an image sets is one its worker's config knows; model images read MODEL_DIR where the chart mounts models", async () => {
    for (const { worker, variant, image } of images) {
      const config = (await serviceConfig(worker))!;
      const env = dockerEnv(image.runtime.lines);
      const processWide = ['NODE_ENV', 'HOME', 'PATH'];
      assert.deepEqual(
        Object.keys(env).filter((n) => !processWide.includes(n) && !config.envVars.includes(n)),
        [],
        `${where(worker, variant)}: variables ${worker}'s config does not know`,
      );
      if (modelWorkers.includes(worker))
        assert.equal(env.MODEL_DIR, getPath(chartValues, 'models.mountPath'));
    }
  });

  test('usesModels in values.yaml marks exactly the model workers', () => {
    assert.deepEqual(
      workerNames.filter((w) => getPath(chartValues, `${w}.usesModels`) === true),
      [...modelWorkers],
    );
  });
});

describe('chart: whisper worker', () => {
  const withWhisper = Object.entries(matrix)
    .filter(([, c]) => c.workers.includes('whisper'))
    .map(([name]) => name);
  interface LoadedWhisperConfig {
    modelDir: string;
    queue: { concurrency: number; depth: number };
    maxAudioSeconds: number;
    execution: { providers: string[]; intraOpThreads?: number };
  }
  async function loadWhisper(c: Container): Promise<LoadedWhisperConfig> {
    const config = await serviceConfig('whisper');
    assert.ok(config?.load, 'services/whisper exports loadWhisperConfig');
    return config.load(containerEnvironment(c)) as LoadedWhisperConfig;
  }
  const whisperOf = (name: string) => mainContainer(deploymentOf(render(name), 'whisper')!);

  test('it loads models from the mount, with one ONNX Runtime thread per requested core', async () => {
    assert.ok(withWhisper.length >= 5);
    for (const name of withWhisper) {
      const c = whisperOf(name);
      const loaded = await loadWhisper(c);
      assert.equal(loaded.modelDir, '/models', name);
      const cores = cpuCores(c.resources?.requests?.cpu);
      assert.equal(loaded.execution.intraOpThreads, Math.max(1, Math.floor(cores)), `${name}: threads`);
      // ffmpeg is the image's (FFMPEG_PATH in its Dockerfile): the chart does not move it.
      assert.equal(envNames(c).includes('FFMPEG_PATH'), false, name);
    }
  });

  test('the memory limit holds every upload the queue admits, decoded, and room for the model', async () => {
    for (const name of withWhisper) {
      const c = whisperOf(name);
      const { queue, maxAudioSeconds } = await loadWhisper(c);
      // 16 kHz mono float32: 64 KB per second of audio, for the running and every waiting upload.
      const decoded = (queue.concurrency + queue.depth) * maxAudioSeconds * 16_000 * 4;
      const limit = memoryBytes(c.resources?.limits?.memory);
      assert.ok(
        limit - decoded >= 2 * 2 ** 30,
        `${name}: ${(limit / 2 ** 30).toFixed(1)} GiB leaves less than 2 GiB beside ${(decoded / 2 ** 30).toFixed(1)} GiB of decoded audio`,
      );
    }
  });

  test('KEDA scales on waiting uploads before the queue is full', async () => {
    for (const name of ['KEDA on', 'everything on']) {
      const objects = render(name);
      const { queue } = await loadWhisper(mainContainer(deploymentOf(objects, 'whisper')!));
      const trigger = (
        ofKind(objects, 'ScaledObject').find((s) => componentOf(s) === 'whisper')!.spec as {
          triggers: { type: string; metadata: Record<string, string> }[];
        }
      ).triggers[0]!;
      assert.equal(
        trigger.metadata.query,
        'sum(whisper_queue_depth{namespace="switchboard",service="whisper"})',
      );
      assert.ok(
        Number(trigger.metadata.threshold) < queue.depth,
        `${name}: threshold below WHISPER_QUEUE_DEPTH`,
      );
    }
  });
});

describe('chart: diffusion worker', () => {
  const withDiffusion = Object.entries(matrix)
    .filter(([, c]) => c.workers.includes('diffusion'))
    .map(([name]) => name);
  interface LoadedDiffusionConfig {
    modelDir: string;
    queue: { concurrency: number; depth: number };
    execution: { providers: string[]; intraOpThreads?: number };
    objectStore: { s3?: { endpoint: string; bucket: string }; directory: string };
  }
  async function loadDiffusion(c: Container): Promise<LoadedDiffusionConfig> {
    const config = await serviceConfig('diffusion');
    assert.ok(config?.load, 'services/diffusion exports loadDiffusionConfig');
    return config.load(containerEnvironment(c)) as LoadedDiffusionConfig;
  }
  const objectStoreEnv = (c: Container) =>
    (c.env ?? []).filter((e) => e.name.startsWith('S3_') || e.name === 'OBJECT_STORE_DIR');

  test('it loads models from the mount, with one ONNX Runtime thread per requested core', async () => {
    assert.ok(withDiffusion.length >= 5);
    for (const name of withDiffusion) {
      const c = mainContainer(deploymentOf(render(name), 'diffusion')!);
      const loaded = await loadDiffusion(c);
      assert.equal(loaded.modelDir, '/models', name);
      const cores = cpuCores(c.resources?.requests?.cpu);
      assert.equal(loaded.execution.intraOpThreads, Math.max(1, Math.floor(cores)), `${name}: threads`);
      assert.equal(loaded.queue.concurrency, 1, `${name}: one image at a time uses every thread`);
    }
  });

  test("PNGs go where the gateway reads them: the gateway's S3 settings and Secret, else /tmp/objects", async () => {
    // The cases with s3.existingSecret, and the Secret they name.
    const s3Secret: Record<string, string> = {
      'external infra URLs and secrets': 'sb-s3',
      'models synced from the object store': 'sb-s3',
      'skaffold: dev + gpu values, every worker': 'switchboard-minio-root',
      'everything on': 'sb-s3',
    };
    for (const name of withDiffusion) {
      const objects = render(name);
      const gateway = objectStoreEnv(mainContainer(deploymentOf(objects, 'gateway')!));
      const d = deploymentOf(objects, 'diffusion')!;
      const c = mainContainer(d);
      assert.deepEqual(objectStoreEnv(c), gateway, `${name}: the same variables and Secret files`);
      const loaded = await loadDiffusion(c);
      const secret = s3Secret[name];
      assert.equal(loaded.objectStore.s3 !== undefined, secret !== undefined, `${name}: S3 on or off`);
      if (secret) {
        assert.deepEqual(
          [secretRef(d, 'S3_ACCESS_KEY')?.name, secretRef(d, 'S3_SECRET_KEY')?.name],
          [secret, secret],
          name,
        );
      } else {
        assert.equal(loaded.objectStore.directory, '/tmp/objects', name);
      }
    }
  });

  test('KEDA scales on waiting requests before the queue is full', async () => {
    for (const name of ['KEDA on', 'everything on']) {
      const objects = render(name);
      const { queue } = await loadDiffusion(mainContainer(deploymentOf(objects, 'diffusion')!));
      const trigger = (
        ofKind(objects, 'ScaledObject').find((s) => componentOf(s) === 'diffusion')!.spec as {
          triggers: { type: string; metadata: Record<string, string> }[];
        }
      ).triggers[0]!;
      assert.equal(
        trigger.metadata.query,
        'sum(diffusion_queue_depth{namespace="switchboard",service="diffusion"})',
      );
      assert.ok(
        Number(trigger.metadata.threshold) < queue.depth,
        `${name}: threshold below DIFFUSION_QUEUE_DEPTH`,
      );
    }
  });
});

describe('chart: animation worker', () => {
  const everyBackend = 'animation: every back-end, the avatar Secret, GPU, KEDA from zero';
  const withAnimation = Object.entries(matrix)
    .filter(([, c]) => c.workers.includes('animation'))
    .map(([name]) => name);
  const withAvatar = [everyBackend, 'everything on'];
  const animationOf = (objects: K8sObject[]) => mainContainer(deploymentOf(objects, 'animation')!);
  const envEntry = (c: Container, name: string) => c.env?.find((e) => e.name === name);
  interface ScaledObjectSpec {
    minReplicaCount: number;
    maxReplicaCount: number;
    triggers: { type: string; name?: string; metadata: Record<string, string> }[];
  }
  const scaledObjectOf = (objects: K8sObject[]) =>
    ofKind(objects, 'ScaledObject').find((s) => componentOf(s) === 'animation')!.spec as ScaledObjectSpec;
  const grpc = { name: 'grpc', number: 50051 };
  const rogue = { app: 'rogue', 'app.kubernetes.io/name': 'something-else' };

  test('the gpu profile gives it a GPU on GPU nodes, ONNX Runtime on CUDA and the models; the CPU build none', () => {
    for (const name of ['skaffold: dev + gpu values, every worker', everyBackend, 'everything on']) {
      const d = deploymentOf(render(name), 'animation')!;
      const c = mainContainer(d);
      assert.equal(c.resources?.limits?.['nvidia.com/gpu'], 1, name);
      assert.ok(
        d.spec.template.spec.tolerations?.some(
          (t) => t.key === 'nvidia.com/gpu' && t.operator === 'Exists' && t.effect === 'NoSchedule',
        ),
        `${name}: tolerates the GPU nodes' taint`,
      );
      assert.equal(envEntry(c, 'ORT_EXECUTION_PROVIDERS')?.value, 'cuda,cpu', name);
      assert.equal(envEntry(c, 'MODEL_DIR')?.value, '/models', name);
      // No surge pod on rollouts: a spare GPU is rarely free.
      const strategy = (d.spec as { strategy?: { rollingUpdate?: object } }).strategy;
      assert.deepEqual(strategy?.rollingUpdate, { maxSurge: 0, maxUnavailable: 1 }, name);
    }
    const skaffoldGpu = deploymentOf(render('skaffold: dev + gpu values, every worker'), 'animation')!;
    assert.deepEqual(skaffoldGpu.spec.template.spec.nodeSelector, { 'nvidia.com/gpu.present': 'true' });
    const cpu = animationOf(render('every worker enabled'));
    assert.equal(cpu.resources?.limits?.['nvidia.com/gpu'], undefined);
    assert.equal(envEntry(cpu, 'ORT_EXECUTION_PROVIDERS')?.value, 'cpu');
  });

  test('ANIMATION_BACKENDS is backends; AVATAR_API_KEY comes from the Secret, and only once the avatar back-end has one', () => {
    assert.ok(withAnimation.length >= 10);
    for (const name of withAnimation) {
      const d = deploymentOf(render(name), 'animation')!;
      const c = mainContainer(d);
      assert.equal(envEntry(c, 'ANIMATION_BACKENDS')?.value, 'video-diffusion,portrait,avatar', name);
      if (!withAvatar.includes(name)) {
        // Served but unconfigured: the worker says so, and the gateway refuses avatar jobs (503).
        assert.deepEqual(
          envNames(c).filter((n) => n.startsWith('AVATAR_')),
          [],
          `${name}: no avatar settings without the vendor's Secret`,
        );
        continue;
      }
      assert.equal(envEntry(c, 'AVATAR_BASE_URL')?.value, 'https://api.d-id.com', name);
      assert.ok(!envNames(c).includes('AVATAR_API_KEY'), `${name}: never a value`);
      assert.deepEqual(
        secretRef(d, 'AVATAR_API_KEY'),
        { name: 'sb-avatar', key: 'did-api-key' },
        `${name}: a file from the operator's Secret`,
      );
    }
    assert.ok(
      !ofKind(render(everyBackend), 'Secret').some((s) => s.metadata.name === 'sb-avatar'),
      'the chart creates no avatar Secret',
    );
  });

  test('a CPU deployment for the avatar back-end alone: its variables, no models, its consumer only', () => {
    const objects = helmTemplate({
      values: [
        animationAllBackends,
        { animation: { backends: ['avatar'], usesModels: false, autoscaling: { minReplicas: 1 } } },
        { keda: { enabled: true } },
      ],
    });
    const c = animationOf(objects);
    assert.equal(envEntry(c, 'ANIMATION_BACKENDS')?.value, 'avatar');
    assert.ok(secretRef(deploymentOf(objects, 'animation')!, 'AVATAR_API_KEY'));
    assert.equal(envEntry(c, 'MODEL_DIR'), undefined);
    assert.equal(c.resources?.limits?.['nvidia.com/gpu'], undefined);
    const scaled = scaledObjectOf(objects);
    assert.equal(scaled.minReplicaCount, 1, 'minReplicas as asked');
    assert.deepEqual(
      scaled.triggers.map((t) => t.metadata.consumer),
      ['animation-avatar'],
    );
  });

  test('deploy/helm/values/animation-avatar.yaml: a second release for the avatar back-end on CPU, beside the GPU one', () => {
    const shared = { clusterAuth: { existingSecret: 'sb-cluster', create: false }, keda: { enabled: true } };
    const main = helmTemplate({
      values: [shared, { animation: { enabled: true, backends: ['video-diffusion', 'portrait'] } }, gpuOn],
    });
    const avatar = helmTemplate({
      releaseName: 'switchboard-avatar',
      valuesFiles: [join(valuesDir, 'animation-avatar.yaml')],
      values: [shared, { animation: { avatar: { existingSecret: 'sb-avatar' } } }],
    });
    assert.deepEqual(ofKind(avatar, 'Deployment').map(componentOf), ['animation'], 'the worker alone');
    assert.deepEqual(ofKind(avatar, 'Secret'), [], 'no Secret of its own');
    const objects = [...main, ...avatar];
    assert.deepEqual(objects.flatMap(k8sProblems), []);
    const ids = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    assert.equal(new Set(ids).size, ids.length, 'no name taken twice');
    // Between them, KEDA watches each back-end's consumer once.
    const consumers = ofKind(objects, 'ScaledObject')
      .filter((s) => componentOf(s) === 'animation')
      .flatMap((s) => (s.spec as ScaledObjectSpec).triggers.map((t) => t.metadata.consumer));
    assert.deepEqual(consumers.sort(), backendNames.map((b) => jobNames().consumer(b)).sort());

    const gpuPods = deploymentOf(main, 'animation')!;
    const cpuPods = deploymentOf(avatar, 'animation')!;
    const cpu = mainContainer(cpuPods);
    assert.equal(envEntry(cpu, 'ANIMATION_BACKENDS')?.value, 'avatar');
    assert.ok(secretRef(cpuPods, 'AVATAR_API_KEY'));
    assert.equal(envEntry(cpu, 'MODEL_DIR'), undefined, 'no models');
    assert.equal(cpu.resources?.limits?.['nvidia.com/gpu'], undefined, 'no GPU');
    assert.equal(mainContainer(gpuPods).resources?.limits?.['nvidia.com/gpu'], 1);
    assert.deepEqual(secretRef(cpuPods, 'CLUSTER_SECRET'), secretRef(gpuPods, 'CLUSTER_SECRET'));
    // The vendor egress reaches the avatar pods, not the GPU pods, though both are "animation".
    const labelsOf = (d: DeploymentObject) => d.spec.template.metadata.labels;
    assert.ok(egressAllowsAddress(policiesFor(objects, labelsOf(cpuPods)), '93.184.216.34'));
    assert.ok(!egressAllowsAddress(policiesFor(objects, labelsOf(gpuPods)), '93.184.216.34'));
  });

  test('the gateway gets no ANIMATION_ADDR: it never calls the worker', () => {
    for (const name of Object.keys(matrix)) {
      const gateway = deploymentOf(render(name), 'gateway');
      if (gateway) assert.ok(!envNames(mainContainer(gateway)).includes('ANIMATION_ADDR'), name);
    }
  });

  test('KEDA: one nats-jetstream trigger per back-end served, on its consumer of SWITCHBOARD_ANIMATE, from zero', () => {
    const objects = render(everyBackend);
    const scaled = scaledObjectOf(objects);
    assert.equal(scaled.minReplicaCount, 0, 'scales to zero');
    assert.equal(deploymentOf(objects, 'animation')!.spec.replicas, undefined, 'replicas left to KEDA');
    assert.deepEqual(
      scaled.triggers.map((t) => [t.type, t.name, t.metadata.stream, t.metadata.consumer]),
      [
        ['nats-jetstream', 'video-diffusion', 'SWITCHBOARD_ANIMATE', 'animation-video-diffusion'],
        ['nats-jetstream', 'portrait', 'SWITCHBOARD_ANIMATE', 'animation-portrait'],
        ['nats-jetstream', 'avatar', 'SWITCHBOARD_ANIMATE', 'animation-avatar'],
      ],
    );
    for (const t of scaled.triggers) {
      assert.equal(t.metadata.natsServerMonitoringEndpoint, 'nats.switchboard.svc:8222');
      assert.equal(t.metadata.account, '$G');
      assert.equal(t.metadata.activationLagThreshold, '0', 'one pending job wakes the worker');
      assert.equal(t.metadata.useHttps, 'false');
    }
    assert.deepEqual(
      scaledObjectOf(render('KEDA on')).triggers.map((t) => t.metadata.consumer),
      ['animation-video-diffusion', 'animation-portrait', 'animation-avatar'],
    );
    // A deployment that leaves a back-end to another release does not wake for its jobs.
    const gpuOnly = helmTemplate({
      values: [
        { animation: { enabled: true, backends: ['video-diffusion', 'portrait'] }, keda: { enabled: true } },
      ],
    });
    assert.deepEqual(
      scaledObjectOf(gpuOnly).triggers.map((t) => t.metadata.consumer),
      ['animation-video-diffusion', 'animation-portrait'],
    );
  });

  test("the stream, the consumers and the back-ends are the job system's own (libs/jobs)", () => {
    const values = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as unknown;
    const schema = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8')) as unknown;
    const names = jobNames();
    assert.equal(getPath(values, 'animation.autoscaling.trigger.stream'), names.stream);
    assert.deepEqual(
      getPath(values, 'animation.autoscaling.trigger.consumers'),
      Object.fromEntries(backendNames.map((b) => [b, names.consumer(b)])),
    );
    assert.deepEqual(getPath(values, 'animation.backends'), [...backendNames], 'every back-end by default');
    assert.deepEqual(getPath(schema, 'definitions.worker.properties.backends.items.enum'), [...backendNames]);
  });

  test('KEDA counts running jobs as lag: a pod is given at least as many as it runs at once', () => {
    for (const name of withAnimation.filter((n) => matrix[n]!.keda)) {
      const objects = render(name);
      const concurrency = Number(envEntry(animationOf(objects), 'ANIMATION_CONCURRENCY')?.value ?? '1');
      for (const t of scaledObjectOf(objects).triggers) {
        assert.ok(
          Number(t.metadata.lagThreshold) >= concurrency,
          `${name}: lagThreshold ${t.metadata.lagThreshold} below ANIMATION_CONCURRENCY ${concurrency}`,
        );
      }
    }
  });

  test('the NATS monitor KEDA reads: from nats.url, or keda.nats.monitoringEndpoint; required with the URL in a Secret', () => {
    const endpoints = (values: object[], namespace?: string) =>
      scaledObjectOf(
        helmTemplate({
          values: [{ animation: { enabled: true }, keda: { enabled: true } }, ...values],
          namespace,
        }),
      ).triggers.map((t) => [t.metadata.natsServerMonitoringEndpoint, t.metadata.useHttps]);
    // One trigger per back-end, all on the same monitor.
    const each = (endpoint: string, https = 'false') => backendNames.map(() => [endpoint, https]);
    assert.deepEqual(
      endpoints([], 'jobs'),
      each('nats.jobs.svc:8222'),
      'a bare name, in the release namespace',
    );
    assert.deepEqual(
      endpoints([{ nats: { url: 'nats://user:pw@nats.messaging.svc.cluster.local:4222' } }]),
      each('nats.messaging.svc.cluster.local:8222'),
    );
    assert.deepEqual(
      endpoints([{ keda: { nats: { monitoringEndpoint: 'nats-monitor.example.net:443', useHttps: true } } }]),
      each('nats-monitor.example.net:443', 'true'),
    );
    assert.match(
      helmTemplateFailure({
        values: [
          { animation: { enabled: true }, keda: { enabled: true }, nats: { existingSecret: 'sb-nats' } },
        ],
      }),
      /keda\.nats\.monitoringEndpoint/,
    );
  });

  test('the running job gets SHUTDOWN_GRACE_MS within terminationGracePeriodSeconds; no preStop sleep', () => {
    for (const name of withAnimation) {
      const d = deploymentOf(render(name), 'animation')!;
      const c = mainContainer(d);
      assert.equal(c.lifecycle, undefined, `${name}: nothing to drain`);
      const graceMs = Number(envEntry(c, 'SHUTDOWN_GRACE_MS')?.value);
      assert.ok(graceMs > 0, name);
      assert.ok(graceMs / 1000 < (d.spec.template.spec.terminationGracePeriodSeconds ?? 30), name);
    }
  });

  test('NetworkPolicies: no pod reaches its gRPC port; egress to DNS and the infrastructure, and HTTPS out only with the avatar vendor configured', () => {
    const infraPorts = [53, 5353, 4222, 6379, 9000];
    for (const name of ['every worker enabled', 'network policies on', ...withAvatar]) {
      const objects = render(name);
      const labelsOf = (component: string) => deploymentOf(objects, component)!.spec.template.metadata.labels;
      const animation = labelsOf('animation');
      assert.ok(
        !connectionAllowed(objects, labelsOf('gateway'), animation, grpc),
        `${name}: gateway -> gRPC`,
      );
      assert.ok(!connectionAllowed(objects, rogue, animation, grpc), `${name}: another pod -> gRPC`);
      const policies = policiesFor(objects, animation);
      const egress = policies.flatMap((p) => p.spec.egress ?? []);
      for (const rule of egress.filter((r) => !(r.to ?? []).some((peer) => peer.ipBlock))) {
        const ports = (rule.ports ?? []).map((p) => p.port as number);
        assert.ok(ports.length > 0 && ports.every((p) => infraPorts.includes(p)), JSON.stringify(rule));
      }
      for (const component of ['gateway', ...workerNames].filter((c) => deploymentOf(objects, c))) {
        for (const port of [grpc, { name: 'http', number: 8080 }, { name: 'metrics', number: 9464 }]) {
          assert.ok(
            !connectionAllowed(objects, animation, labelsOf(component), port),
            `${name}: animation -> ${component} ${port.name}`,
          );
        }
      }
      const internet = egress.filter((r) => (r.to ?? []).some((peer) => peer.ipBlock));
      if (!withAvatar.includes(name)) {
        assert.deepEqual(internet, [], `${name}: no internet egress without the avatar vendor's Secret`);
        assert.ok(!egressAllowsAddress(policies, '93.184.216.34'), name);
        continue;
      }
      assert.equal(internet.length, 1, name);
      assert.deepEqual(internet[0]!.ports, [{ port: 443, protocol: 'TCP' }], `${name}: HTTPS only`);
      assert.ok(egressAllowsAddress(policies, '93.184.216.34'), `${name}: the vendor's public address`);
      for (const ip of [
        '10.1.2.3',
        '172.20.0.1',
        '192.168.1.1',
        '169.254.169.254',
        '100.64.0.1',
        '198.19.0.1',
      ])
        assert.ok(!egressAllowsAddress(policies, ip), `${name}: animation must not reach ${ip}`);
    }
  });

  test('animation.avatar.egressTo narrows the avatar egress to the peers given', () => {
    const objects = helmTemplate({
      values: [
        animationAllBackends,
        { animation: { avatar: { egressTo: [{ ipBlock: { cidr: '198.51.100.0/24' } }] } } },
      ],
    });
    const policies = policiesFor(objects, deploymentOf(objects, 'animation')!.spec.template.metadata.labels);
    assert.ok(egressAllowsAddress(policies, '198.51.100.7'));
    assert.ok(!egressAllowsAddress(policies, '93.184.216.34'));
  });

  test('NOTES.txt: jobs from JetStream, its back-ends and GPU, scaling from zero, the avatar egress', () => {
    const notes = helmNotes({
      values: [animationAllBackends, { animation: { gpu: { enabled: true } }, keda: { enabled: true } }],
    });
    assert.match(
      notes,
      /animation: jobs from JetStream stream SWITCHBOARD_ANIMATE, back-ends video-diffusion, portrait, avatar, 1 x nvidia\.com\/gpu per pod/,
    );
    assert.match(
      notes,
      /animation scales from zero: KEDA reads the consumers' lag from the NATS monitor at nats\.switchboard\.svc:8222/,
    );
    assert.match(notes, /Animation pods \(avatar back-end\) reach the public internet on 443 only/);
    assert.doesNotMatch(notes, /avatar back-end is not configured/);
    const plain = helmNotes({ values: [{ animation: { enabled: true } }] });
    assert.match(
      plain,
      /animation: jobs from JetStream stream SWITCHBOARD_ANIMATE, back-ends video-diffusion, portrait, avatar\n/,
    );
    assert.match(
      plain,
      /The avatar back-end is not configured \(animation\.avatar\.existingSecret is empty\)/,
    );
    assert.doesNotMatch(plain, /scales from zero|Animation pods \(avatar back-end\)/);
  });
});

describe('chart: KEDA triggers', () => {
  test('JetStream for animation, Prometheus queue depth for llm/whisper/diffusion, sessions for browser', () => {
    const scaled = ofKind(render('KEDA on'), 'ScaledObject');
    const triggerOf = (worker: string) =>
      (
        scaled.find((s) => componentOf(s) === worker)!.spec as {
          triggers: { type: string; metadata: Record<string, string> }[];
        }
      ).triggers[0]!;
    const animation = triggerOf('animation');
    assert.equal(animation.type, 'nats-jetstream');
    assert.equal(animation.metadata.natsServerMonitoringEndpoint, 'nats.switchboard.svc:8222');
    assert.ok(animation.metadata.stream && animation.metadata.consumer);
    for (const worker of ['llm', 'whisper', 'diffusion']) {
      assert.equal(triggerOf(worker).type, 'prometheus');
      assert.match(triggerOf(worker).metadata.query!, new RegExp(`queue_depth.*${worker}`));
    }
    assert.equal(triggerOf('browser').type, 'prometheus');
    assert.match(triggerOf('browser').metadata.query!, /sessions/);
  });

  test('each Prometheus query selects a series the worker exports, with the labels its registry adds', async (t) => {
    const scaled = ofKind(render('KEDA on'), 'ScaledObject');
    const checked: string[] = [];
    for (const s of scaled) {
      const worker = componentOf(s)!;
      const trigger = (s.spec as { triggers: { type: string; metadata: Record<string, string> }[] })
        .triggers[0]!;
      if (trigger.type !== 'prometheus') continue;
      const exposition = await serviceMetricsText(worker);
      if (exposition === undefined) continue; // the service does not exist yet
      const samples = exposition.split('\n').filter((line) => line && !line.startsWith('#'));
      const selectors = [...trigger.metadata.query!.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}/g)];
      assert.ok(selectors.length > 0, `${worker}: the query selects a metric`);
      for (const [, metric, matchers] of selectors) {
        // namespace is the scrape target's label (the monitors add it), never the process's own.
        const labels = matchers!
          .split(',')
          .map((m) => m.trim())
          .filter((m) => m && !m.startsWith('namespace='));
        assert.ok(
          samples.some(
            (line) => line.startsWith(`${metric}{`) && labels.every((label) => line.includes(label)),
          ),
          `${worker}: ${metric}{${matchers}} is not among what the worker exports:\n${samples.filter((l) => l.startsWith(worker)).join('\n')}`,
        );
      }
      checked.push(worker);
    }
    for (const worker of ['llm', 'whisper', 'diffusion', 'browser'])
      assert.ok(checked.includes(worker), `${worker}'s query is checked`);
    t.diagnostic(`checked: ${checked.join(', ')}`);
  });
});

describe('chart: gateway edge settings', () => {
  test('externalTrafficPolicy only on LoadBalancer/NodePort; ingress and allowlist rendered', () => {
    const defaults = ofKind(render('defaults'), 'Service').find((s) => componentOf(s) === 'gateway')!;
    assert.equal((defaults.spec as { externalTrafficPolicy?: string }).externalTrafficPolicy, undefined);
    const objects = render('edge: LoadBalancer, ingress, allowlist, tiers');
    const service = ofKind(objects, 'Service').find((s) => componentOf(s) === 'gateway')!;
    assert.equal((service.spec as { type: string }).type, 'LoadBalancer');
    assert.equal((service.spec as { externalTrafficPolicy?: string }).externalTrafficPolicy, 'Local');
    assert.equal(ofKind(objects, 'Ingress').length, 1);
    const env = containerEnvironment(mainContainer(deploymentOf(objects, 'gateway')!));
    assert.equal(env.IP_ALLOWLIST, '203.0.113.0/24,2001:db8::/32');
    assert.equal(env.LLM_ADDR, 'llm.other-namespace.svc.cluster.local:50051');
    assert.equal(env.WHISPER_ADDR, 'sb-switchboard-whisper:50051');
    assert.deepEqual(JSON.parse(env.TIER_POLICIES!), { basic: { requests_per_minute: 30 } });
  });

  test('the admin token Secret is generated (by the hook Job) only without an existing Secret', () => {
    const adminSecrets = (name: string) =>
      generatedSecrets(render(name))
        .map((s) => s.name)
        .filter((n) => n.endsWith('-admin-token') || n === 'sb-admin');
    assert.deepEqual(adminSecrets('defaults'), ['sb-switchboard-admin-token']);
    assert.deepEqual(adminSecrets('external infra URLs and secrets'), []);
    const gateway = deploymentOf(render('external infra URLs and secrets'), 'gateway')!;
    assert.deepEqual(secretRef(gateway, 'ADMIN_TOKEN'), { name: 'sb-admin', key: 'admin-token' });
  });

  test("the gateway's container ports are the ones its image exposes", () => {
    const exposed = dockerExposed(serviceImage('gateway').runtime.lines);
    const ports = mainContainer(deploymentOf(render('defaults'), 'gateway')!).ports!.map(
      (p) => p.containerPort,
    );
    assert.deepEqual(
      ports.sort((a, b) => a - b),
      exposed,
    );
  });
});

describe('chart: models volume', () => {
  test('model workers mount the claim read-only at MODEL_DIR; the others mount nothing', () => {
    const objects = render('models from a PVC');
    for (const worker of workerNames) {
      const pod = deploymentOf(objects, worker)!.spec.template.spec;
      const volume = pod.volumes?.find((v) => v.name === 'models');
      const mount = pod.containers[0]!.volumeMounts?.find((m) => m.name === 'models');
      if (modelWorkers.includes(worker)) {
        assert.equal(volume?.persistentVolumeClaim?.claimName, 'models', worker);
        assert.deepEqual(mount, { name: 'models', mountPath: '/models', readOnly: true, subPath: 'onnx' });
      } else {
        assert.equal(volume, undefined, worker);
        assert.equal(mount, undefined, worker);
      }
    }
  });

  test('a sync init container fills an emptyDir from the bucket, for model workers only', () => {
    const objects = render('models synced from the object store');
    for (const worker of workerNames) {
      const pod = deploymentOf(objects, worker)!.spec.template.spec;
      const sync = pod.initContainers?.find((c) => c.name === 'sync-models');
      assert.equal(sync !== undefined, modelWorkers.includes(worker), worker);
      if (!sync) continue;
      assert.equal(sync.image, 'quay.io/minio/mc:RELEASE.2025-01-01T00-00-00Z');
      assert.deepEqual(
        envNames(sync).filter((n) => n.startsWith('S3_')),
        ['S3_ENDPOINT', 'S3_BUCKET', 'S3_ACCESS_KEY', 'S3_SECRET_KEY'],
      );
      assert.ok(pod.volumes?.find((v) => v.name === 'models')?.emptyDir, `${worker}: models emptyDir`);
    }
  });
});

describe('chart: NOTES.txt', () => {
  test('tells how to reach the gateway and read the admin token, and lists the workers', () => {
    const notes = helmNotes();
    assert.match(notes, /port-forward svc\/sb-switchboard-gateway 8080:80/);
    assert.match(notes, /get secret sb-switchboard-admin-token/);
    assert.match(notes, /Workers enabled: none/);
    assert.doesNotMatch(notes, /Model workers/);
    assert.match(
      notes,
      /Cluster secret \(CLUSTER_SECRET, Secret sb-switchboard-cluster-secret, key secret\)/,
    );
    assert.match(notes, /NetworkPolicies: default deny for every Switchboard pod/);
    assert.doesNotMatch(notes, /networkPolicies\.enabled is false/);
  });

  test('warns when NetworkPolicies are turned off', () => {
    const notes = helmNotes({ values: [{ networkPolicies: { enabled: false } }] });
    assert.match(notes, /WARNING: networkPolicies\.enabled is false/);
  });

  test('says when model workers have no model source', () => {
    const bare = helmNotes({ values: [{ whisper: { enabled: true } }] });
    assert.match(bare, /whisper: sb-switchboard-whisper:50051 \(headless\)\n/);
    assert.match(bare, /Model workers \(whisper\) report SERVING once their default model has loaded/);
    assert.match(bare, /WARNING: models\.existingClaim is empty and models\.sync is off/);
    const claimed = helmNotes({
      values: [{ whisper: { enabled: true }, models: { existingClaim: 'models' } }],
    });
    assert.match(claimed, /Model workers \(whisper\)/);
    assert.doesNotMatch(claimed, /WARNING: models/);
    assert.doesNotMatch(helmNotes({ values: [{ browser: { enabled: true } }] }), /Model workers/);
  });

  test('warns about an allowlist behind SNAT and about missing cluster CIDRs', () => {
    const notes = helmNotes({
      values: [
        allWorkers,
        gpuOn,
        { networkPolicies: { enabled: true }, keda: { enabled: true } },
        {
          gateway: {
            ipAllowlist: '203.0.113.0/24',
            service: { type: 'LoadBalancer', externalTrafficPolicy: 'Cluster' },
          },
        },
      ],
    });
    assert.match(notes, /llm: sb-switchboard-llm:50051 \(headless\), 1 x nvidia\.com\/gpu per pod/);
    assert.match(notes, /whisper: sb-switchboard-whisper:50051 \(headless\), 1 x nvidia\.com\/gpu per pod/);
    assert.match(
      notes,
      /diffusion: sb-switchboard-diffusion:50051 \(headless\), 1 x nvidia\.com\/gpu per pod/,
    );
    assert.match(notes, /browser: sb-switchboard-browser:50051 \(headless\)\n/);
    assert.match(notes, /WARNING: gateway\.ipAllowlist is set/);
    assert.match(notes, /WARNING: networkPolicies\.clusterCIDRs is empty/);
    assert.match(notes, /KEDA ScaledObjects manage the worker replicas/);
  });
});

describe('chart: values.schema.json rejects bad values', () => {
  const rejected: [string, RenderOptions, RegExp][] = [
    ['negative replicas', { set: ['llm.replicas=-1'] }, /\/llm\/replicas/],
    ['an unknown top-level key', { values: [{ replicaCount: 3 }] }, /additional properties 'replicaCount'/],
    ['an unknown key in a worker block', { values: [{ browser: { replica: 2 } }] }, /\/browser/],
    ['a string where a number goes', { values: [{ gateway: { replicas: 'two' } }] }, /\/gateway\/replicas/],
    [
      'a string where a boolean goes',
      { values: [{ llm: { gpu: { enabled: 'yes' } } }] },
      /\/llm\/gpu\/enabled/,
    ],
    ['a zero GPU count', { values: [{ llm: { gpu: { count: 0 } } }] }, /\/llm\/gpu\/count/],
    ['a bad pull policy', { values: [{ whisper: { image: { pullPolicy: 'Sometimes' } } }] }, /pullPolicy/],
    ['a number as an env value', { values: [{ gateway: { env: { LOG_LEVEL: 3 } } }] }, /\/gateway\/env/],
    [
      'a lower-case env name',
      { values: [{ browser: { env: { 'browser-timeout': '1' } } }] },
      /browser-timeout/,
    ],
    [
      'a bad resource quantity',
      { values: [{ llm: { resources: { limits: { memory: 'lots' } } } }] },
      /memory/,
    ],
    [
      'a cluster CIDR that is not one',
      { values: [{ networkPolicies: { clusterCIDRs: ['cluster'] } }] },
      /clusterCIDRs/,
    ],
    [
      'an unknown traffic policy',
      { values: [{ gateway: { service: { externalTrafficPolicy: 'Nearest' } } }] },
      /externalTrafficPolicy/,
    ],
    [
      'an unknown KEDA trigger',
      { values: [{ llm: { autoscaling: { trigger: { type: 'cpu' } } } }] },
      /trigger/,
    ],
    ['running as root', { values: [{ securityContext: { runAsUser: 0 } }] }, /runAsUser/],
    ['a redis URL of another scheme', { values: [{ redis: { url: 'http://redis:6379' } }] }, /\/redis\/url/],
    [
      'a worker address without a port',
      { values: [{ gateway: { workerAddresses: { llm: 'llm' } } }] },
      /workerAddresses/,
    ],
    ['no admin token source', { values: [{ adminToken: { create: false } }] }, /adminToken/],
    ['no cluster secret source', { values: [{ clusterAuth: { create: false } }] }, /clusterAuth/],
    ['an unknown clusterAuth key', { values: [{ clusterAuth: { secret: 'x' } }] }, /clusterAuth/],
    [
      'a literal cluster secret in env',
      { values: [{ llm: { enabled: true, env: { CLUSTER_SECRET: 'a'.repeat(40) } } }] },
      /llm\.env\.CLUSTER_SECRET/,
    ],
    [
      'min replicas above max',
      { values: [{ gateway: { autoscaling: { minReplicas: 5, maxReplicas: 2 } } }] },
      /minReplicas/,
    ],
    [
      'a downward-API field that is not one',
      { values: [{ browser: { fieldEnv: { BROWSER_ADVERTISE_HOST: 'status.podIp' } } }] },
      /fieldEnv/,
    ],
    [
      'a Localhost seccomp profile without its file',
      { values: [{ browser: { seccompProfile: { type: 'Localhost' } } }] },
      /seccompProfile/,
    ],
    [
      'an extra port that would replace the gRPC port',
      { values: [{ browser: { extraPorts: [{ name: 'other', port: 9300, env: 'GRPC_PORT' }] } }] },
      /extraPorts/,
    ],
    [
      'env setting a port an extra port passes',
      { values: [{ browser: { enabled: true, env: { DEVTOOLS_PORT: '9300' } } }] },
      /browser\.env\.DEVTOOLS_PORT/,
    ],
    [
      'a model sync without a pinned client image',
      { values: [{ llm: { enabled: true }, models: { sync: { enabled: true } } }] },
      /models\.sync\.image\.tag/,
    ],
    [
      'a literal avatar API key in env',
      { values: [{ animation: { enabled: true, env: { AVATAR_API_KEY: 'k' } } }] },
      /animation\.env\.AVATAR_API_KEY/,
    ],
    [
      'a NATS password in env',
      { values: [{ gateway: { env: { NATS_PASSWORD: 'p' } } }] },
      /gateway\.env\.NATS_PASSWORD/,
    ],
    [
      "a file of one's own for a Secret the chart mounts",
      { values: [{ browser: { enabled: true, env: { S3_SECRET_KEY_FILE: '/tmp/key' } } }] },
      /browser\.env\.S3_SECRET_KEY_FILE/,
    ],
    [
      'any other _FILE variable (the chart mounts no files of yours)',
      {
        values: [
          { llm: { enabled: true, env: { LOG_LEVEL_FILE: '/var/run/secrets/switchboard/cluster-secret' } } },
        ],
      },
      /llm\.env\.LOG_LEVEL_FILE/,
    ],
    ['a NATS user for a model worker', { values: [{ nats: { auth: { users: { llm: 'llm' } } } }] }, /users/],
    ['an empty NATS user name', { values: [{ nats: { auth: { users: { browser: '' } } } }] }, /browser/],
    [
      'an S3 Secret for something that is no component',
      { values: [{ s3: { componentSecrets: { minio: 'sb-s3' } } }] },
      /invalid propertyName 'minio'/,
    ],
    [
      'the shared infrastructure egress list (replaced by nats, redis, objectStore)',
      { values: [{ networkPolicies: { infrastructure: [] } }] },
      /infrastructure/,
    ],
    [
      'ANIMATION_BACKENDS in env (backends drives the triggers and egress too)',
      { values: [{ animation: { enabled: true, env: { ANIMATION_BACKENDS: 'avatar' } } }] },
      /animation\.env\.ANIMATION_BACKENDS/,
    ],
    ['an unknown animation back-end', { values: [{ animation: { backends: ['lipsync'] } }] }, /backends/],
    ['no animation back-end', { values: [{ animation: { backends: [] } }] }, /backends/],
    ['back-ends on another worker', { values: [{ llm: { backends: ['avatar'] } }] }, /\/llm\/backends/],
    [
      'an avatar vendor URL without TLS',
      { values: [{ animation: { avatar: { baseUrl: 'http://api.d-id.com' } } }] },
      /baseUrl/,
    ],
    [
      'a back-end without a consumer to scale on',
      {
        values: [
          { animation: { enabled: true, autoscaling: { trigger: { consumers: { portrait: null } } } } },
        ],
      },
      /no consumer for the portrait back-end/,
    ],
    [
      'a single consumer (the trigger names one per back-end)',
      {
        values: [{ animation: { autoscaling: { trigger: { consumer: 'animation', consumers: null } } } }],
      },
      /trigger/,
    ],
  ];
  for (const [what, options, message] of rejected) {
    test(`helm template fails on ${what}`, () => {
      assert.match(helmTemplateFailure(options), message);
    });
  }
  test('helm lint --strict fails on bad values too', () => {
    const result = helmLint({ set: ['llm.replicas=-1'] });
    assert.notEqual(result.status, 0);
  });
});

describe('deploy/docker/Dockerfile', () => {
  const dockerfile = parseDockerfile();
  const images: ServiceImage[] = workspaceServices.flatMap((service) =>
    imageVariants(service).map((variant) => serviceImage(service, variant)),
  );
  const commonPrefix = (a: string[], b: string[]) => {
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    return a.slice(0, i);
  };

  test('every service of the workspace has its image, from its own stage; every stage serves some image', () => {
    assert.equal(images.length, workspaceServices.length + modelWorkers.length);
    const used = new Set<string>();
    for (const { service, variant, runtime, build } of images) {
      assert.ok(runtime.stages.includes(service), `SERVICE=${service} builds the stage ${service}`);
      const dev = resolveStage(dockerfile, { SERVICE: service, VARIANT: variant }, 'dev');
      for (const chain of [runtime, build, dev]) {
        for (const stage of chain.stages) used.add(stage);
        for (const line of chain.lines) {
          const from = /^COPY --from=(\S+) /.exec(line)?.[1];
          if (from === undefined) continue;
          for (const stage of resolveStage(dockerfile, { SERVICE: service, VARIANT: variant }, from).stages)
            used.add(stage);
        }
      }
    }
    assert.deepEqual(
      dockerfile.stages.map((s) => s.name ?? '(unnamed)').filter((name) => !used.has(name)),
      [],
      'stages no image is built from',
    );
  });

  test('the dependency layers are the same for every service, and the OS layers for every image of a variant', () => {
    // One cache for the lockfile install and the sources, whatever SERVICE is.
    const build = images.map((i) => i.build.lines).reduce(commonPrefix);
    assert.ok(build.some((l) => /pnpm fetch/.test(l)) && build.includes('COPY . .'), build.join('\n'));
    // The base image, tini, the user and the common ENV: shared layers under every service's own.
    for (const variant of ['cpu', 'cuda'] as const) {
      const runtime = images
        .filter((i) => i.variant === variant)
        .map((i) => i.runtime.lines)
        .reduce(commonPrefix);
      assert.ok(
        runtime.some((l) => /apt-get install .*\btini\b/.test(l)),
        `${variant}: tini`,
      );
      assert.ok(
        runtime.some((l) => /useradd --system --uid 10001\b/.test(l)),
        `${variant}: the user`,
      );
      assert.ok(
        runtime.some((l) => /^ENV .*\bHOME=\/tmp\b/.test(l)),
        `${variant}: HOME`,
      );
    }
  });
});

describe('deploy/docker/Dockerfile: build layers and the development image', () => {
  const dockerfile = parseDockerfile();
  const variants = workspaceServices.flatMap((service) =>
    imageVariants(service).map((variant) => ({
      service,
      variant,
      args: { SERVICE: service, VARIANT: variant },
    })),
  );

  test('no RUN reads what a cache mount of another RUN holds (a layer cache can restore one without the other)', () => {
    for (const { args } of variants) {
      // The build chains: the image's (build) and the development image's (dev-build).
      for (const target of ['build', 'dev-build']) {
        const runs = resolveStage(dockerfile, args, target).lines.filter((l) => l.startsWith('RUN '));
        runs.forEach((run, i) => {
          for (const mount of run.matchAll(/--mount=type=cache,\S*?target=([^,\s]+)/g)) {
            const others = runs.filter((other, j) => j !== i && other.includes(mount[1]!));
            assert.deepEqual(others, [], `${mount[1]} is a cache mount of: ${run}`);
          }
        });
      }
    }
  });

  test('the dev target: the service stage plus the built workspace (libs/devcluster too), owned and run by the app user', () => {
    for (const { service, variant, args } of variants) {
      const where = `SERVICE=${service} VARIANT=${variant} --target dev`;
      const dev = resolveStage(dockerfile, args, 'dev');
      const image = serviceImage(service, variant);
      const serviceStage = image.runtime.stages.indexOf(service);
      assert.deepEqual(dev.stages.slice(0, -1), image.runtime.stages.slice(0, serviceStage + 1), where);
      const copies = dev.lines.filter((l) => l.startsWith('COPY --from='));
      const devCopy = copies.at(-1)!;
      assert.equal(devCopy, 'COPY --from=dev-build --chown=10001:10001 /src /src', where);
      const workspace = resolveStage(dockerfile, args, 'dev-build');
      // The workspace the image's own build left (its lines first), then devcluster built beside it.
      assert.deepEqual(workspace.lines.slice(0, image.build.lines.length), image.build.lines, where);
      const extra = workspace.lines.slice(image.build.lines.length).join('\n');
      assert.match(extra, /--filter "@switchboard\/devcluster\.\.\."/, where);
      assert.match(extra, new RegExp(`tsc -b services/${service} libs/devcluster`), where);
      assert.equal(dockerEnv(dev.lines).SERVICE, service, where);
      assert.ok(dev.lines.includes(`WORKDIR /src/services/${service}`), where);
      assert.equal(dev.lines.filter((l) => l.startsWith('USER')).at(-1), 'USER 10001:10001', where);
      assert.equal(dev.lines.at(-2), 'ENTRYPOINT ["/usr/bin/tini", "--"]');
      const cmd = /^CMD \["node", "\/src\/(deploy\/docker\/[\w-]+\.mjs)"\]$/.exec(dev.lines.at(-1)!);
      assert.ok(cmd, `${where}: the watching entrypoint: ${dev.lines.at(-1)}`);
      assert.ok(existsSync(join(repoRoot, cmd[1]!)), cmd[1]);
    }
  });

  test('Dockerfile.dockerignore: the root .dockerignore, plus exactly the scripts the build runs from deploy/docker', () => {
    const rules = (path: string) =>
      readFileSync(join(repoRoot, path), 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('#'));
    const own = rules('deploy/docker/Dockerfile.dockerignore');
    const root = rules('.dockerignore');
    const aboutDeploy = (rule: string) => /^!?deploy\b/.test(rule);
    assert.deepEqual(
      own.filter((r) => !aboutDeploy(r)),
      root.filter((r) => !aboutDeploy(r)),
    );
    assert.deepEqual(
      root.filter((r) => r.startsWith('deploy')),
      ['deploy'],
    );
    assert.deepEqual(
      own.filter((r) => r.startsWith('deploy')),
      ['deploy/*'],
    );
    assert.deepEqual(
      own.filter((r) => r.startsWith('!deploy')),
      ['!deploy/docker/*.mjs'],
    );
    // Every file of deploy/docker the build runs is one that rule lets in.
    const used = new Set(
      readFileSync(join(repoRoot, 'deploy', 'docker', 'Dockerfile'), 'utf8').match(
        /deploy\/docker\/[\w./-]+/g,
      ),
    );
    used.delete('deploy/docker/Dockerfile');
    used.delete('deploy/docker/Dockerfile.dockerignore');
    for (const path of used) {
      assert.match(path, /^deploy\/docker\/[\w-]+\.mjs$/, `${path} is in the build context`);
      assert.ok(existsSync(join(repoRoot, path)), path);
    }
    assert.ok(used.size >= 2, [...used].join(', '));
  });
});

describe('skaffold.yaml', () => {
  interface HelmRelease {
    name: string;
    chartPath?: string;
    remoteChart?: string;
    version?: string;
    valuesFiles?: string[];
    setValues?: Record<string, unknown>;
    setValueTemplates?: Record<string, string>;
  }
  interface Artifact {
    image: string;
    context?: string;
    docker?: { dockerfile?: string; target?: string; buildArgs?: Record<string, string> };
  }
  interface SkaffoldConfig {
    apiVersion: string;
    kind: string;
    metadata?: { name?: string };
    requires?: { configs?: string[] }[];
    build?: { artifacts?: Artifact[] };
    deploy?: { helm?: { releases?: HelmRelease[] } };
    profiles?: {
      name: string;
      build?: { artifacts?: Artifact[] };
      deploy?: { helm?: { releases?: HelmRelease[] } };
      patches?: { op?: string; path: string; value?: unknown }[];
    }[];
  }

  const text = readFileSync(join(repoRoot, 'skaffold.yaml'), 'utf8');
  const configs = parseAllDocuments(text).map((doc) => {
    assert.deepEqual(doc.errors, []);
    return doc.toJS() as SkaffoldConfig;
  });
  const chartValues = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as Record<string, unknown>;
  const sanitize = (image: string) => image.replace(/[/\-.:]/g, '_');
  /**
   * Every config skaffold makes of a module (test/support/skaffold-profiles.ts): `skaffold dev` (its
   * dev profile on) and `run`, alone and with each profile a user names (gpu, dev-infra).
   */
  const variants = (c: SkaffoldConfig) =>
    (['dev', 'run'] as const).flatMap((command) =>
      [[], ['gpu'], ['dev-infra']]
        .filter((named) => named.every((n) => c.profiles?.some((p) => p.name === n)))
        .map((named) => ({
          command,
          named,
          config: applyProfiles(c, command, named),
        })),
    );
  const allReleases = (c: SkaffoldConfig) =>
    variants(c).flatMap((v) => v.config.deploy?.helm?.releases ?? []);
  const allArtifacts = (c: SkaffoldConfig) => variants(c).flatMap((v) => v.config.build?.artifacts ?? []);

  test('every document is a named skaffold v4 config', () => {
    assert.ok(configs.length >= 2);
    for (const c of configs) {
      assert.match(c.apiVersion, /^skaffold\/v4beta\d+$/);
      assert.equal(c.kind, 'Config');
      assert.ok(c.metadata?.name, 'a module name');
    }
    const names = configs.map((c) => c.metadata!.name);
    assert.equal(new Set(names).size, names.length);
  });

  test('every service in the workspace has a module of its name, and only those build images', () => {
    assert.ok(workspaceServices.includes('gateway'));
    for (const service of workspaceServices) {
      assert.ok(
        configs.some((c) => c.metadata?.name === service),
        `services/${service} has no skaffold module`,
      );
    }
    for (const c of configs) {
      for (const artifact of allArtifacts(c)) {
        const service = c.metadata!.name!;
        assert.ok(
          workspaceServices.includes(service),
          `${service} builds ${artifact.image} but is no service`,
        );
        assert.equal(artifact.image, `switchboard/${service}`);
        assert.equal(artifact.context ?? '.', '.', 'built from the repository root');
      }
    }
  });

  test('every image is built from deploy/docker/Dockerfile with SERVICE=<module>, every arg it needs set', () => {
    const dockerfile = parseDockerfile();
    const required = [...dockerfile.globalArgs]
      .filter(([, value]) => value === undefined)
      .map(([name]) => name);
    assert.deepEqual(required, ['SERVICE']);
    const images = new Set<string>();
    for (const c of configs) {
      for (const { command, config } of variants(c)) {
        const docker = config.build?.artifacts?.[0]?.docker;
        if (!docker) continue;
        const service = c.metadata!.name!;
        assert.equal(docker.dockerfile, 'deploy/docker/Dockerfile', `${service}: the one template`);
        // skaffold dev builds the development image; every other command the image stage.
        const target = command === 'dev' ? 'dev' : 'image';
        assert.equal(docker.target, target, `${service} (${command}): target ${target}`);
        const args = docker.buildArgs ?? {};
        assert.equal(args.SERVICE, service, `${service}: SERVICE names the module's service`);
        for (const name of required) assert.ok(name in args, `${service}: ${name} is set`);
        for (const name of Object.keys(args))
          assert.ok(
            dockerfile.globalArgs.has(name),
            `${service}: ${name} is a build arg the Dockerfile declares`,
          );
        // What BuildKit builds with those args: the service's own stage, on a known variant.
        const image = resolveStage(dockerfile, args, target);
        assert.ok(image.stages.includes(service), `${service}: its stage is in the image`);
        const variant = (args.VARIANT ?? dockerfile.globalArgs.get('VARIANT')) as Variant;
        assert.ok(imageVariants(service).includes(variant), `${service}: VARIANT=${args.VARIANT}`);
        images.add(`${service}:${variant}`);
      }
    }
    assert.deepEqual(
      [...images].sort(),
      [...workspaceServices.map((s) => `${s}:cpu`), ...modelWorkers.map((w) => `${w}:cuda`)].sort(),
      'one CPU image each, one CUDA variant per model worker',
    );
  });

  test("image names reach the chart through setValueTemplates keyed by the chart's values blocks", () => {
    for (const c of configs) {
      const artifacts = allArtifacts(c);
      if (artifacts.length === 0) continue;
      const service = c.metadata!.name!;
      const image = `switchboard/${service}`;
      assert.equal(
        getPath(chartValues, `${service}.image.repository`),
        image,
        `values.yaml ${service}.image`,
      );
      const releases = allReleases(c).filter((r) => r.chartPath);
      assert.ok(releases.length > 0, `${service} deploys the chart`);
      const v = sanitize(image);
      for (const release of releases) {
        assert.equal(release.chartPath, 'deploy/helm/switchboard');
        assert.equal(release.setValues?.[`${service}.enabled`], true, `${release.name} enables ${service}`);
        assert.deepEqual(release.setValueTemplates, {
          [`${service}.image.repository`]: `{{.IMAGE_REPO_${v}}}`,
          [`${service}.image.tag`]: `{{.IMAGE_TAG_${v}}}@{{.IMAGE_DIGEST_${v}}}`,
        });
      }
    }
  });

  test('every value key skaffold sets exists in the chart, and every values file exists', () => {
    for (const c of configs) {
      for (const release of allReleases(c)) {
        for (const file of release.valuesFiles ?? []) assert.ok(existsSync(join(repoRoot, file)), file);
        if (!release.chartPath) continue;
        for (const key of [
          ...Object.keys(release.setValues ?? {}),
          ...Object.keys(release.setValueTemplates ?? {}),
        ]) {
          assert.notEqual(
            getPath(chartValues, key),
            undefined,
            `${release.name}: ${key} is not a chart value`,
          );
        }
      }
    }
  });

  test('the images skaffold builds render into the Deployments as repository:tag@digest', () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    for (const c of configs) {
      for (const release of allReleases(c).filter((r) => r.chartPath)) {
        const set: string[] = Object.entries(release.setValues ?? {}).map(
          ([k, value]) => `${k}=${String(value)}`,
        );
        for (const [key, template] of Object.entries(release.setValueTemplates ?? {})) {
          const value = template
            .replace(/\{\{\.IMAGE_REPO_[A-Za-z0-9_]+\}\}/g, `registry.example.com/${c.metadata!.name}`)
            .replace(/\{\{\.IMAGE_TAG_[A-Za-z0-9_]+\}\}/g, 'dev')
            .replace(/\{\{\.IMAGE_DIGEST_[A-Za-z0-9_]+\}\}/g, digest);
          assert.doesNotMatch(value, /\{\{/, `${key}: only image templates`);
          set.push(`${key}=${value}`);
        }
        const objects = helmTemplate({
          valuesFiles: (release.valuesFiles ?? []).map((f) => join(repoRoot, f)),
          set,
        });
        assert.deepEqual(objects.flatMap(k8sProblems), []);
        const d = deploymentOf(objects, c.metadata!.name!)!;
        assert.equal(mainContainer(d).image, `registry.example.com/${c.metadata!.name}:dev@${digest}`);
        assert.equal(
          d.metadata.name,
          `switchboard-${c.metadata!.name}`,
          'shared names across module releases',
        );
      }
    }
  });

  test('profiles: cpu and gpu in every service module, dev-infra installs NATS (JetStream), Redis, MinIO, PostgreSQL', () => {
    for (const c of configs.filter((c) => allArtifacts(c).length > 0)) {
      const profiles = (c.profiles ?? []).map((p) => p.name);
      assert.ok(
        profiles.includes('cpu') && profiles.includes('gpu'),
        `${c.metadata!.name}: cpu and gpu profiles`,
      );
      assert.ok(
        (c.requires ?? []).some((r) => r.configs?.includes('infra')),
        `${c.metadata!.name} requires the infra module`,
      );
    }
    const devInfra = configs.flatMap((c) => (c.profiles ?? []).filter((p) => p.name === 'dev-infra'));
    assert.equal(devInfra.length, 1);
    const releases = devInfra[0]!.deploy!.helm!.releases!;
    assert.deepEqual(releases.map((r) => r.name).sort(), ['minio', 'nats', 'postgresql', 'redis']);
    for (const r of releases) {
      assert.ok(r.remoteChart, `${r.name} comes from its chart repository`);
      // An exact release, so every developer gets the same infrastructure (deploy/README.md).
      assert.match(String(r.version ?? ''), /^\d+\.\d+\.\d+$/, `${r.name} pins its chart version`);
    }
    const natsValues: unknown = parse(
      readFileSync(join(repoRoot, releases.find((r) => r.name === 'nats')!.valuesFiles![0]!), 'utf8'),
    );
    assert.equal(getPath(natsValues, 'config.jetstream.enabled'), true);
  });

  test("a model worker's gpu profile builds its CUDA variant, on GPU values; every other build is the CPU image", () => {
    const gpuValues = parse(readFileSync(join(valuesDir, 'gpu.yaml'), 'utf8')) as Record<string, unknown>;
    assert.equal(parseDockerfile().globalArgs.get('VARIANT'), 'cpu', 'VARIANT defaults to cpu');
    const variantsBuilt: string[] = [];
    for (const c of configs.filter((c) => (c.build?.artifacts ?? []).length > 0)) {
      const service = c.metadata!.name!;
      const profile = (name: string) => c.profiles?.find((p) => p.name === name);
      assert.deepEqual(
        [profile('cpu')?.build, profile('cpu')?.deploy, profile('cpu')?.patches],
        [undefined, undefined, undefined],
        `${service}: cpu is the default build and release`,
      );
      for (const command of ['dev', 'run']) {
        const cpu = applyProfiles(c, command, []);
        const gpu = applyProfiles(c, command, ['gpu']);
        const [cpuArtifact] = cpu.build!.artifacts!;
        const [gpuArtifact] = gpu.build!.artifacts!;
        const [cpuRelease] = cpu.deploy!.helm!.releases!;
        const [gpuRelease] = gpu.deploy!.helm!.releases!;
        assert.deepEqual(
          cpuArtifact!.docker?.buildArgs,
          { SERVICE: service },
          `${service}: the CPU image by default`,
        );
        if (!imageVariants(service).includes('cuda')) {
          assert.deepEqual(gpu, cpu, `${service} (${command}): no GPU image variant, no GPU values`);
          continue;
        }
        if (command === 'run') variantsBuilt.push(service);
        assert.deepEqual(
          { ...gpuArtifact, docker: { ...gpuArtifact!.docker, buildArgs: undefined } },
          { ...cpuArtifact, docker: { ...cpuArtifact!.docker, buildArgs: undefined } },
          `${service} (${command}): the gpu profile builds the same artifact`,
        );
        assert.deepEqual(gpuArtifact!.docker?.buildArgs, { SERVICE: service, VARIANT: 'cuda' });
        assert.deepEqual({ ...gpuRelease, valuesFiles: gpuRelease!.valuesFiles?.slice(0, -1) }, cpuRelease);
        assert.equal(gpuRelease!.valuesFiles!.at(-1), 'deploy/helm/values/gpu.yaml');
      }
      if (imageVariants(service).includes('cuda')) {
        assert.equal(
          getPath(gpuValues, `${service}.gpu.enabled`),
          true,
          `gpu.yaml asks a GPU for ${service}`,
        );
      }
    }
    assert.deepEqual(
      variantsBuilt.sort(),
      [...modelWorkers].sort(),
      'every model worker has its CUDA variant',
    );
  });

  test('nothing is patched by array index', () => {
    for (const c of configs) {
      for (const patch of (c.profiles ?? []).flatMap((p) => p.patches ?? [])) {
        assert.doesNotMatch(patch.path, /\/\d+(\/|$)/, `patch ${patch.path}`);
      }
    }
  });
});
