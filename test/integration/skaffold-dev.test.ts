import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { parseDockerfile, resolveStage } from '../support/dockerfile.js';
import {
  allContainers,
  deploymentOf,
  modelWorkers,
  ofKind,
  type Container,
  type DeploymentObject,
  type PodSpec,
  type WorkerName,
} from '../support/helm-checks.js';
import { helmNotes, helmTemplate, helmTemplateFailure, repoRoot, type K8sObject } from '../support/helm.js';
import { skaffoldReleaseOptions } from '../support/render-matrix.js';
import { activatedProfiles, applyProfiles, type Config } from '../support/skaffold-profiles.js';

/**
 * `skaffold dev -m <service>` (and `-p gpu`) without skaffold, which is not installable here: each
 * module of skaffold.yaml with the profiles skaffold itself would apply (test/support/
 * skaffold-profiles.ts), alone, for `dev` and for `run`, on CPU and GPU. What it builds (the dev
 * target with file sync, or the production image), and what its one release renders: a pod that
 * comes up without any other module (every Secret, ConfigMap, ServiceAccount and volume it
 * references exists in that render, is created by its hook Job, or is an operator's Secret the
 * values files name), development models for model workers, a writable /src for the dev loop.
 */

interface Artifact {
  image: string;
  context?: string;
  docker?: { dockerfile?: string; target?: string; buildArgs?: Record<string, string> };
  sync?: { manual?: { src: string; dest: string; strip?: string }[] };
}
interface HelmRelease {
  name: string;
  chartPath?: string;
  valuesFiles?: string[];
  setValues?: Record<string, unknown>;
  setValueTemplates?: Record<string, string>;
}
type Module = Config & {
  build?: { artifacts?: Artifact[] };
  deploy?: { helm?: { releases?: HelmRelease[] } };
};

const configs = parseAllDocuments(readFileSync(join(repoRoot, 'skaffold.yaml'), 'utf8')).map(
  (doc) => doc.toJS() as Module,
);
const services = configs.filter((c) => (c.build?.artifacts ?? []).length > 0).map((c) => c.metadata!.name!);
const moduleOf = (service: string) => configs.find((c) => c.metadata?.name === service)!;
const isModelWorker = (service: string) => modelWorkers.includes(service as WorkerName);
const commands = ['dev', 'run'] as const;
const profileSets = [[], ['cpu'], ['gpu']] as const;

/** Every file of the repository below `dir` (relative paths), for matching sync globs. */
function filesBelow(dir: string): string[] {
  const absolute = join(repoRoot, dir);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (name === 'node_modules' || name === 'dist') return [];
    return statSync(join(repoRoot, path)).isDirectory() ? filesBelow(path) : [path];
  });
}
const sourceFiles = [
  ...readdirSync(join(repoRoot, 'services')).flatMap((s) => filesBelow(`services/${s}`)),
  ...readdirSync(join(repoRoot, 'libs')).flatMap((l) => filesBelow(`libs/${l}`)),
];

/** skaffold's sync globs: `*` within a path segment, `**` across segments. */
function globRegExp(glob: string): RegExp {
  const pattern = glob
    .split('/')
    .map((part) =>
      part === '**' ? '(?:.*/)?' : `${part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}/`,
    )
    .join('');
  return new RegExp(`^${pattern.replace(/\(\?:\.\*\/\)\?$/, '.*').replace(/\/$/, '')}$`);
}

/** The names a pod spec needs from the cluster, by kind. */
function podReferences(pod: PodSpec & Record<string, unknown>): { kind: string; name: string }[] {
  const refs: { kind: string; name: string }[] = [];
  const spec = pod as {
    serviceAccountName?: string;
    imagePullSecrets?: { name: string }[];
    volumes?: {
      secret?: { secretName: string };
      configMap?: { name: string };
      persistentVolumeClaim?: { claimName: string };
      projected?: { sources: { secret?: { name: string }; configMap?: { name: string } }[] };
    }[];
  };
  if (spec.serviceAccountName) refs.push({ kind: 'ServiceAccount', name: spec.serviceAccountName });
  for (const s of spec.imagePullSecrets ?? []) refs.push({ kind: 'Secret', name: s.name });
  for (const v of spec.volumes ?? []) {
    if (v.secret) refs.push({ kind: 'Secret', name: v.secret.secretName });
    if (v.configMap) refs.push({ kind: 'ConfigMap', name: v.configMap.name });
    if (v.persistentVolumeClaim)
      refs.push({ kind: 'PersistentVolumeClaim', name: v.persistentVolumeClaim.claimName });
    for (const source of v.projected?.sources ?? []) {
      if (source.secret) refs.push({ kind: 'Secret', name: source.secret.name });
      if (source.configMap) refs.push({ kind: 'ConfigMap', name: source.configMap.name });
    }
  }
  for (const c of allContainers(pod) as (Container & {
    env?: { valueFrom?: { secretKeyRef?: { name: string }; configMapKeyRef?: { name: string } } }[];
    envFrom?: { secretRef?: { name: string }; configMapRef?: { name: string } }[];
  })[]) {
    for (const e of c.env ?? []) {
      if (e.valueFrom?.secretKeyRef) refs.push({ kind: 'Secret', name: e.valueFrom.secretKeyRef.name });
      if (e.valueFrom?.configMapKeyRef)
        refs.push({ kind: 'ConfigMap', name: e.valueFrom.configMapKeyRef.name });
    }
    for (const e of c.envFrom ?? []) {
      if (e.secretRef) refs.push({ kind: 'Secret', name: e.secretRef.name });
      if (e.configMapRef) refs.push({ kind: 'ConfigMap', name: e.configMapRef.name });
    }
  }
  return refs;
}

/** Pod specs of every workload kind the chart renders. */
function podsOf(objects: K8sObject[]): { owner: string; pod: PodSpec & Record<string, unknown> }[] {
  return objects.flatMap((o) => {
    const spec = o.spec as { template?: { spec?: PodSpec }; containers?: unknown } | undefined;
    if (spec?.template?.spec)
      return [{ owner: `${o.kind}/${o.metadata.name}`, pod: spec.template.spec as never }];
    if (o.kind === 'Pod') return [{ owner: `Pod/${o.metadata.name}`, pod: spec as never }];
    return [];
  });
}

/** The Secrets the release's hook Job creates (its ConfigMap's secrets.json). */
function hookSecrets(objects: K8sObject[]): { name: string; key: string; length: number }[] {
  const job = ofKind(objects, 'Job').find((j) => j.metadata.name.endsWith('-secrets'));
  if (!job) return [];
  const configMap = ofKind(objects, 'ConfigMap').find((c) => c.metadata.name === job.metadata.name);
  const data = (configMap as { data?: Record<string, string> } | undefined)?.data ?? {};
  return (JSON.parse(data['secrets.json'] ?? '{"secrets": []}') as { secrets: never[] }).secrets;
}

/** Names an operator supplies: every existingSecret, existingClaim and secretName in these values. */
function operatorNames(values: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(values)) values.forEach((v) => operatorNames(v, into));
  else if (values && typeof values === 'object') {
    for (const [key, value] of Object.entries(values)) {
      if (
        ['existingSecret', 'existingClaim', 'secretName'].includes(key) &&
        typeof value === 'string' &&
        value
      )
        into.add(value);
      else if (key === 'componentSecrets' && value && typeof value === 'object')
        Object.values(value as Record<string, unknown>).forEach((v) => typeof v === 'string' && into.add(v));
      else operatorNames(value, into);
    }
  }
  return into;
}

interface Case {
  service: string;
  command: (typeof commands)[number];
  profiles: readonly string[];
  config: Module;
  artifact: Artifact;
  release: HelmRelease;
  objects: K8sObject[];
}

const cases: Case[] = services.flatMap((service) =>
  commands.flatMap((command) =>
    profileSets.map((profiles) => {
      const config = applyProfiles(moduleOf(service), command, profiles);
      const artifacts = config.build?.artifacts ?? [];
      const releases = (config.deploy?.helm?.releases ?? []).filter((r) => r.chartPath);
      assert.equal(artifacts.length, 1, `${service}: one artifact`);
      assert.equal(releases.length, 1, `${service}: one release of the chart`);
      const objects = helmTemplate(skaffoldReleaseOptions(releases[0] as never, service));
      return { service, command, profiles, config, artifact: artifacts[0]!, release: releases[0]!, objects };
    }),
  ),
);
const label = (c: Case) =>
  `skaffold ${c.command} -m ${c.service}${c.profiles.map((p) => ` -p ${p}`).join('')}`;

describe('skaffold: the profiles each command applies', () => {
  test('skaffold dev turns on the dev profile of every service module by itself; run, build and render do not', () => {
    for (const service of services) {
      const config = moduleOf(service);
      assert.deepEqual(activatedProfiles(config, 'dev'), ['dev'], service);
      assert.deepEqual(activatedProfiles(config, 'dev', ['gpu']), ['dev', 'gpu'], service);
      for (const command of ['run', 'build', 'render', 'deploy']) {
        assert.deepEqual(activatedProfiles(config, command, ['gpu']), ['gpu'], `${service} ${command}`);
      }
    }
  });

  test('dev and gpu touch separate fields: applied in either order they give the same config', () => {
    for (const service of services) {
      const config = moduleOf(service);
      const dev = {
        ...config,
        profiles: config.profiles!.map((p) => (p.name === 'dev' ? { ...p, activation: [] } : p)),
      };
      // dev named after gpu instead of activated before it.
      assert.deepEqual(
        applyProfiles(config, 'dev', ['gpu']).build,
        applyProfiles(dev, 'run', ['gpu', 'dev']).build,
        service,
      );
      assert.deepEqual(
        applyProfiles(config, 'dev', ['gpu']).deploy,
        applyProfiles(dev, 'run', ['gpu', 'dev']).deploy,
        service,
      );
    }
  });

  test('every patch selects its list item by a field, and replaces a key the module has', () => {
    // skaffold's yaml-patch expands a selecting path only through keys that exist: it cannot add one.
    const resolve = (node: unknown, path: string): unknown =>
      path
        .split('/')
        .slice(1)
        .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce<unknown>((at, token) => {
          if (Array.isArray(at)) {
            const [field, value] = token.split('=');
            return at.find((item) => (item as Record<string, unknown>)[field!] === value);
          }
          return (at as Record<string, unknown> | undefined)?.[token];
        }, node);
    for (const config of configs) {
      for (const profile of config.profiles ?? []) {
        for (const patch of profile.patches ?? []) {
          const where = `${config.metadata?.name} ${profile.name}: ${patch.path}`;
          assert.equal(patch.op, 'replace', where);
          assert.match(patch.path, /^\/(build\/artifacts\/image=|deploy\/helm\/releases\/name=)[^/]+/, where);
          assert.notEqual(
            resolve(config, patch.path),
            undefined,
            `${where}: the key exists before any profile`,
          );
        }
      }
    }
  });

  test('a patch that selects no artifact fails, as it fails skaffold (a planted error)', () => {
    const config = structuredClone(moduleOf('llm'));
    config.profiles!.find((p) => p.name === 'dev')!.patches![0]!.path =
      '/build/artifacts/image=switchboard~1lm/docker/target';
    assert.throws(() => applyProfiles(config, 'dev'), /could not expand pointer/);
    // yaml-patch expands a selecting path only through keys that exist: it cannot add one.
    config.profiles!.find((p) => p.name === 'dev')!.patches![0]!.path =
      '/build/artifacts/image=switchboard~1llm/docker/network';
    assert.throws(() => applyProfiles(config, 'dev'), /could not expand pointer/);
  });
});

describe('skaffold: what each command builds', () => {
  const dockerfile = parseDockerfile();
  const stageNames = dockerfile.stages.map((s) => s.name);

  for (const c of cases) {
    test(`${label(c)}: ${c.command === 'dev' ? 'the dev target, TypeScript sources synced into /src' : 'the production image, nothing synced'}`, () => {
      const docker = c.artifact.docker!;
      const expectedTarget = c.command === 'dev' ? 'dev' : 'image';
      assert.equal(docker.target, expectedTarget);
      assert.ok(
        stageNames.includes(expectedTarget),
        `deploy/docker/Dockerfile has a stage ${expectedTarget}`,
      );
      const gpu = c.profiles.includes('gpu') && isModelWorker(c.service);
      assert.deepEqual(
        docker.buildArgs,
        gpu ? { SERVICE: c.service, VARIANT: 'cuda' } : { SERVICE: c.service },
      );
      const buildArgs = docker.buildArgs ?? {};
      const stage = resolveStage(dockerfile, buildArgs, expectedTarget);
      assert.ok(
        stage.stages.includes(c.service),
        `the ${expectedTarget} target builds on the ${c.service} stage`,
      );

      const rules = c.artifact.sync?.manual ?? [];
      if (c.command !== 'dev') {
        assert.deepEqual(rules, [], 'a production image syncs nothing');
        return;
      }
      const synced = new Set<string>();
      for (const rule of rules) {
        assert.equal(rule.dest, '/src', `${rule.src}: lands at its own path under /src`);
        assert.equal(rule.strip ?? '', '', `${rule.src}: nothing stripped, so /src mirrors the repository`);
        const matched = sourceFiles.filter((f) => globRegExp(rule.src).test(f));
        assert.ok(matched.length > 0, `${rule.src} matches files of the repository`);
        matched.forEach((f) => synced.add(f));
      }
      for (const must of [`services/${c.service}/src/main.ts`, 'libs/config/src/index.ts']) {
        assert.ok(synced.has(must), `an edit of ${must} is synced`);
      }
      assert.ok(![...synced].some((f) => !f.endsWith('.ts')), 'only TypeScript sources');
      // The dev image keeps the workspace at /src as the repository lays it out.
      const copies = stage.lines.filter((l) => /^COPY --from=\S+ (--chown=\S+ )?\/src \/src$/.test(l));
      assert.equal(copies.length, 1, 'the dev target copies the workspace to /src');
      const buildStage = /--from=(\S+)/.exec(copies[0]!)![1]!;
      const build = resolveStage(dockerfile, buildArgs, buildStage);
      const workdirs = build.lines.filter((l) => l.startsWith('WORKDIR '));
      assert.equal(workdirs.at(-1), 'WORKDIR /src', `${buildStage} builds the workspace in /src`);
    });
  }
});

describe('skaffold: each module comes up alone', () => {
  for (const c of cases) {
    test(`${label(c)}: every Secret, ConfigMap, ServiceAccount and volume its pods reference exists`, () => {
      const present = new Set(c.objects.map((o) => `${o.kind}/${o.metadata.name}`));
      for (const s of hookSecrets(c.objects)) present.add(`Secret/${s.name}`);
      const values = (c.release.valuesFiles ?? []).map(
        (f) => parse(readFileSync(join(repoRoot, f), 'utf8')) as unknown,
      );
      const supplied = operatorNames(values);
      const missing: string[] = [];
      for (const { owner, pod } of podsOf(c.objects)) {
        for (const ref of podReferences(pod)) {
          const known =
            present.has(`${ref.kind}/${ref.name}`) ||
            (ref.kind === 'ServiceAccount' && ref.name === 'default') ||
            ((ref.kind === 'Secret' || ref.kind === 'PersistentVolumeClaim') && supplied.has(ref.name));
          if (!known) missing.push(`${owner} -> ${ref.kind}/${ref.name}`);
        }
      }
      assert.deepEqual(missing, []);
    });

    test(`${label(c)}: its own hook creates the shared Secret it reads (the cluster secret) when no release has`, () => {
      // The webhook sender has no gRPC peer and reads no cluster secret; it shares the webhook
      // secrets key with the gateway's release instead.
      const [name, key] =
        c.service === 'webhooks'
          ? ['switchboard-webhook-secrets-key', 'key']
          : ['switchboard-cluster-secret', 'secret'];
      assert.ok(
        hookSecrets(c.objects).some((s) => s.name === name && s.key === key),
        `the shared ${name} is in the hook Job`,
      );
      const hooks = c.objects.filter(
        (o) => (o.metadata as { annotations?: Record<string, string> }).annotations?.['helm.sh/hook'],
      );
      assert.ok(hooks.some((o) => o.kind === 'Job'));
      assert.deepEqual(ofKind(c.objects, 'Secret'), [], 'no Secret is rendered');
    });

    test(`${label(c)}: ${c.command === 'dev' ? 'a writable /src; model workers build development models at MODEL_DIR' : 'read-only root filesystem, no development models'}`, () => {
      const deployment = deploymentOf(c.objects, c.service) as DeploymentObject;
      assert.ok(deployment, `${c.service} is deployed`);
      const pod = deployment.spec.template.spec;
      const main = pod.containers[0]! as Container & {
        securityContext?: { readOnlyRootFilesystem?: boolean };
        volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
        command?: string[];
      };
      assert.equal(main.securityContext?.readOnlyRootFilesystem, c.command !== 'dev');
      const init:
        | (Container & { command?: string[]; volumeMounts?: { name: string; mountPath: string }[] })
        | undefined = (pod.initContainers ?? []).find((i) => i.name === 'dev-models');
      if (c.command !== 'dev' || !isModelWorker(c.service)) {
        assert.equal(init, undefined);
        return;
      }
      assert.ok(init, 'a dev-models init container');
      const modelDir = main.env?.find((e) => e.name === 'MODEL_DIR')?.value;
      assert.ok(modelDir);
      assert.equal(init.image, main.image, "the worker's own (dev) image");
      assert.deepEqual(init.command, [
        'node',
        '/src/libs/devcluster/dist/dev-models-cli.js',
        c.service,
        modelDir,
      ]);
      assert.ok(
        existsSync(join(repoRoot, 'libs/devcluster/src/dev-models-cli.ts')),
        'the CLI it runs is built from here',
      );
      assert.equal(init.volumeMounts?.find((m) => m.name === 'models')?.mountPath, modelDir);
      assert.equal(main.volumeMounts?.find((m) => m.name === 'models')?.mountPath, modelDir);
      assert.ok(pod.volumes?.find((v) => v.name === 'models')?.emptyDir, 'models in an emptyDir of the pod');
    });

    if (c.profiles.includes('gpu') && isModelWorker(c.service)) {
      test(`${label(c)}: asks for a GPU`, () => {
        const main = deploymentOf(c.objects, c.service)!.spec.template.spec.containers[0]!;
        assert.equal(main.resources?.limits?.['nvidia.com/gpu'], 1);
      });
    }
  }
});

describe('skaffold sync globs', () => {
  test('the sync glob helper matches as skaffold does', () => {
    assert.ok(globRegExp('services/llm/src/**/*.ts').test('services/llm/src/main.ts'));
    assert.ok(globRegExp('services/llm/src/**/*.ts').test('services/llm/src/a/b/c.ts'));
    assert.ok(!globRegExp('services/llm/src/**/*.ts').test('services/llm/test/main.ts'));
    assert.ok(globRegExp('libs/*/src/**/*.ts').test('libs/grpc/src/server.ts'));
    assert.ok(!globRegExp('libs/*/src/**/*.ts').test('libs/grpc/x/src/server.ts'));
  });
});

describe('chart: models.devModels', () => {
  const base = {
    nats: { auth: { required: false } },
    redis: { auth: { required: false } },
    llm: { enabled: true },
  };

  test('refuses a claim or a sync beside it: the development models fill an emptyDir of their own', () => {
    for (const models of [
      { devModels: { enabled: true }, existingClaim: 'models' },
      {
        devModels: { enabled: true },
        sync: { enabled: true, image: { tag: 'RELEASE.2025-01-01T00-00-00Z' } },
      },
    ]) {
      assert.match(helmTemplateFailure({ values: [base, { models }] }), /existingClaim|sync|devModels/);
    }
  });

  test('adds the init container to model workers only', () => {
    const objects = helmTemplate({
      values: [base, { models: { devModels: { enabled: true } }, browser: { enabled: true } }],
    });
    const inits = (name: string) =>
      (deploymentOf(objects, name)!.spec.template.spec.initContainers ?? []).map((i) => i.name);
    assert.deepEqual(inits('llm'), ['dev-models']);
    assert.deepEqual(inits('browser'), []);
    const notes = helmNotes({ values: [base, { models: { devModels: { enabled: true } } }] });
    assert.match(notes, /models\.devModels: an init container builds tiny random-weight development models/);
    assert.doesNotMatch(notes, /WARNING: models\.existingClaim is empty/);
  });
});
