import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot, type K8sObject } from './helm.js';
import { objectId, objectViolations } from './k8s-schemas.js';

/** Reading helpers and Kubernetes-schema validation for the chart tests. */

/** The chart's workers: every Deployment but the gateway's (the webhook sender among them). */
export const workerNames = ['llm', 'whisper', 'diffusion', 'animation', 'browser', 'webhooks'] as const;
export type WorkerName = (typeof workerNames)[number];
/** Workers with `usesModels`: MODEL_DIR, the models volume, ONNX Runtime (CUDA with `gpu`). */
export const modelWorkers: readonly WorkerName[] = ['llm', 'whisper', 'diffusion', 'animation'];
/**
 * Workers the gateway calls over gRPC (`<WORKER>_ADDR`). The animation worker takes its jobs from
 * the JetStream work queue; its gRPC port serves only the kubelet's health probes.
 */
export const grpcWorkers: readonly WorkerName[] = ['llm', 'whisper', 'diffusion', 'browser'];

/**
 * Problems with one rendered object, as `Kind/name: path message`: its identity, its name and labels
 * as the API server checks them, and its kind's Kubernetes (or KEDA) schema, unknown fields included.
 */
export function k8sProblems(object: K8sObject): string[] {
  return objectViolations(object).map(
    (violation) => `${objectId(object)}: ${violation.path} ${violation.message}`,
  );
}

export interface Probe {
  grpc?: { port: number; service?: string };
  httpGet?: { path: string; port: number | string };
  periodSeconds?: number;
  failureThreshold?: number;
}

export interface Container {
  name: string;
  image: string;
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } };
  }[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  resources?: { limits?: Record<string, string | number>; requests?: Record<string, string | number> };
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[] };
    seccompProfile?: { type: string; localhostProfile?: string };
  };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}

export interface PodSpec {
  containers: Container[];
  terminationGracePeriodSeconds?: number;
  initContainers?: Container[];
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    fsGroup?: number;
    seccompProfile?: { type: string; localhostProfile?: string };
  };
  tolerations?: { key?: string; operator?: string; effect?: string }[];
  nodeSelector?: Record<string, string>;
  volumes?: {
    name: string;
    emptyDir?: { medium?: string; sizeLimit?: string };
    persistentVolumeClaim?: { claimName: string };
    secret?: { secretName: string; items?: { key: string; path: string }[]; defaultMode?: number };
    projected?: {
      defaultMode?: number;
      sources: { secret?: { name: string; items?: { key: string; path: string }[] } }[];
    };
  }[];
}

export interface DeploymentObject extends K8sObject {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}

export const ofKind = <T extends K8sObject = K8sObject>(objects: K8sObject[], kind: string): T[] =>
  objects.filter((o) => o.kind === kind) as T[];

export const componentOf = (o: K8sObject): string | undefined =>
  o.metadata.labels?.['app.kubernetes.io/component'];

/** The Deployment of one component (gateway or a worker), or undefined when not rendered. */
export function deploymentOf(objects: K8sObject[], component: string): DeploymentObject | undefined {
  return ofKind<DeploymentObject>(objects, 'Deployment').find((d) => componentOf(d) === component);
}

export function allContainers(pod: PodSpec): Container[] {
  return [...(pod.initContainers ?? []), ...pod.containers];
}

export function envNames(container: Container): string[] {
  return (container.env ?? []).map((e) => e.name);
}

/** A variable given as a file (`<NAME>_FILE`), and the Secret item the kubelet puts there. */
export interface SecretFile {
  /** The variable the process reads from the file (NAME for NAME_FILE). */
  name: string;
  path: string;
  secret: string;
  key: string;
  /** The file's mode: its volume's defaultMode (0o644 when none is given). */
  mode: number;
  readOnly: boolean;
}

/**
 * Every `<NAME>_FILE` variable of a container, resolved to the Secret item the kubelet puts at its
 * path (the volume mounted at the path's folder, and its item of that file name). Throws when such a
 * variable names a file no Secret provides, or more than one does.
 */
export function secretFiles(pod: PodSpec, container: Container): Record<string, SecretFile> {
  const files: Record<string, SecretFile> = {};
  for (const entry of container.env ?? []) {
    if (!entry.name.endsWith('_FILE')) continue;
    const name = entry.name.slice(0, -'_FILE'.length);
    const path = entry.value ?? '';
    const mount = (container.volumeMounts ?? []).find((m) => path.startsWith(`${m.mountPath}/`));
    if (!mount) throw new Error(`${container.name}: ${entry.name}=${path} is under no volume mount`);
    const file = path.slice(mount.mountPath.length + 1);
    const volume = pod.volumes?.find((v) => v.name === mount.name);
    const sources = volume?.projected
      ? volume.projected.sources.flatMap((s) => (s.secret ? [s.secret] : []))
      : volume?.secret
        ? [{ name: volume.secret.secretName, items: volume.secret.items }]
        : [];
    const found = sources.flatMap((s) =>
      (s.items ?? []).filter((i) => i.path === file).map((i) => ({ secret: s.name, key: i.key })),
    );
    if (found.length !== 1)
      throw new Error(`${container.name}: ${entry.name}: ${found.length} Secret items at ${path}`);
    files[name] = {
      name,
      path,
      ...found[0]!,
      mode: volume?.projected?.defaultMode ?? volume?.secret?.defaultMode ?? 0o644,
      readOnly: mount.readOnly === true,
    };
  }
  return files;
}

/** True when every label of `selector` is on `labels`. */
export const selects = (
  selector: Record<string, string> | undefined,
  labels: Record<string, string>,
): boolean => Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);

function ipv4ToInt(ip: string): number {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255))
    throw new Error(`not IPv4: ${ip}`);
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

export function ipv4InCidr(ip: string, cidr: string): boolean {
  if (cidr.includes(':')) return false;
  const [base, bitsText] = cidr.split('/');
  const bits = Number(bitsText ?? 32);
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return (ipv4ToInt(ip) & mask) === (ipv4ToInt(base!) & mask);
}

interface PolicyPeer {
  ipBlock?: { cidr: string; except?: string[] };
  podSelector?: {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: string; values?: string[] }[];
  };
  namespaceSelector?: object;
}
interface PolicyPort {
  port?: number | string;
  protocol?: string;
}
interface NetworkPolicyObject extends K8sObject {
  spec: {
    podSelector: { matchLabels?: Record<string, string> };
    policyTypes: string[];
    ingress?: { from?: PolicyPeer[]; ports?: PolicyPort[] }[];
    egress?: { to?: PolicyPeer[]; ports?: PolicyPort[] }[];
  };
}

/** The NetworkPolicies that select a pod with these labels. */
export function policiesFor(objects: K8sObject[], podLabels: Record<string, string>): NetworkPolicyObject[] {
  return ofKind<NetworkPolicyObject>(objects, 'NetworkPolicy').filter((p) =>
    selects(p.spec.podSelector.matchLabels, podLabels),
  );
}

/**
 * Whether the policies selecting a pod let it open a connection to an IPv4 address outside the
 * cluster's pods (only ipBlock peers, or a rule with no `to`, can match such an address).
 */
export function egressAllowsAddress(policies: NetworkPolicyObject[], ip: string): boolean {
  const egressPolicies = policies.filter((p) => p.spec.policyTypes.includes('Egress'));
  if (egressPolicies.length === 0) return true; // not isolated for egress
  return egressPolicies.some((p) =>
    (p.spec.egress ?? []).some((rule) => {
      if (!rule.to || rule.to.length === 0) return true;
      return rule.to.some(
        (peer) =>
          peer.ipBlock !== undefined &&
          ipv4InCidr(ip, peer.ipBlock.cidr) &&
          !(peer.ipBlock.except ?? []).some((except) => ipv4InCidr(ip, except)),
      );
    }),
  );
}

/** Whether a pod selector (labels and expressions, In/NotIn/Exists/DoesNotExist) selects these labels. */
function podSelectorMatches(
  selector: NonNullable<PolicyPeer['podSelector']>,
  labels: Record<string, string>,
): boolean {
  if (!selects(selector.matchLabels, labels)) return false;
  return (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    switch (operator) {
      case 'In':
        return key in labels && values.includes(labels[key]!);
      case 'NotIn':
        return !(key in labels && values.includes(labels[key]!));
      case 'Exists':
        return key in labels;
      case 'DoesNotExist':
        return !(key in labels);
      default:
        throw new Error(`unknown selector operator ${operator}`);
    }
  });
}

/** Whether a rule's ports admit this port (by name or number); a rule without ports admits all. */
function portsAdmit(ports: PolicyPort[] | undefined, port: { name?: string; number: number }): boolean {
  if (!ports || ports.length === 0) return true;
  return ports.some(
    (p) =>
      (p.protocol ?? 'TCP') === 'TCP' &&
      (p.port === undefined || p.port === port.name || p.port === port.number),
  );
}

/** A peer that matches a pod of the same namespace: a podSelector alone (no namespaceSelector, no ipBlock). */
const sameNamespacePeer = (peer: PolicyPeer, labels: Record<string, string>): boolean =>
  peer.podSelector !== undefined &&
  peer.namespaceSelector === undefined &&
  peer.ipBlock === undefined &&
  podSelectorMatches(peer.podSelector, labels);

/**
 * Whether the policies let a pod of this namespace with `fromLabels` open a TCP connection to a pod
 * with `toLabels` on `port` (the port's name as the container declares it, and its number): the
 * target's ingress rules and the source's egress rules must both admit it.
 */
export function connectionAllowed(
  objects: K8sObject[],
  fromLabels: Record<string, string>,
  toLabels: Record<string, string>,
  port: { name?: string; number: number },
): boolean {
  const admits = (
    policies: NetworkPolicyObject[],
    type: 'Ingress' | 'Egress',
    peerLabels: Record<string, string>,
  ): boolean => {
    const applying = policies.filter((p) => p.spec.policyTypes.includes(type));
    if (applying.length === 0) return true; // not isolated in this direction
    return applying.some((p) =>
      (type === 'Ingress'
        ? (p.spec.ingress ?? []).map((r) => ({ peers: r.from, ports: r.ports }))
        : (p.spec.egress ?? []).map((r) => ({ peers: r.to, ports: r.ports }))
      ).some(
        (rule) =>
          (!rule.peers ||
            rule.peers.length === 0 ||
            rule.peers.some((peer) => sameNamespacePeer(peer, peerLabels))) &&
          portsAdmit(rule.ports, port),
      ),
    );
  };
  return (
    admits(policiesFor(objects, toLabels), 'Ingress', fromLabels) &&
    admits(policiesFor(objects, fromLabels), 'Egress', toLabels)
  );
}

/** Reads a dotted path ("gateway.image.repository") from parsed YAML. */
export function getPath(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object' || !(key in current)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

export interface ServiceConfigModule {
  /** Every environment variable the service's config schema knows. */
  envVars: string[];
  /** The service's own config loader, when it exports one (`load<Name>Config`). */
  load?: (source: Record<string, string | undefined>) => unknown;
}

/**
 * A service's compiled config module (`services/<name>/dist/config.js`), which by convention exports
 * `<name>EnvVars` (and `load<Name>Config`); undefined while the service does not exist.
 */
export async function serviceConfig(name: string): Promise<ServiceConfigModule | undefined> {
  if (!existsSync(join(repoRoot, 'services', name, 'src', 'config.ts'))) return undefined;
  const path = join(repoRoot, 'services', name, 'dist', 'config.js');
  if (!existsSync(path)) throw new Error(`services/${name} is not built: ${path} is missing`);
  const module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  const envVars = module[`${name}EnvVars`];
  if (!Array.isArray(envVars)) throw new Error(`services/${name}/src/config.ts must export ${name}EnvVars`);
  const capitalized = name[0]!.toUpperCase() + name.slice(1);
  const load = module[`load${capitalized}Config`];
  return {
    envVars: envVars as string[],
    load: typeof load === 'function' ? (load as ServiceConfigModule['load']) : undefined,
  };
}

/**
 * What a service's metrics endpoint would expose before any traffic: its compiled metrics module
 * (`services/<name>/dist/metrics.js`, exporting `create<Name>Metrics(registry)`) registered on the
 * registry every service builds (`createRegistry(<name>)` of libs/telemetry, with its default labels).
 * Undefined while the service (or its metrics module) does not exist.
 */
export async function serviceMetricsText(name: string): Promise<string | undefined> {
  if (!existsSync(join(repoRoot, 'services', name, 'src', 'metrics.ts'))) return undefined;
  const path = join(repoRoot, 'services', name, 'dist', 'metrics.js');
  const telemetryPath = join(repoRoot, 'libs', 'telemetry', 'dist', 'index.js');
  for (const file of [path, telemetryPath]) {
    if (!existsSync(file)) throw new Error(`not built: ${file} is missing`);
  }
  const capitalized = name[0]!.toUpperCase() + name.slice(1);
  const metrics = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  const create = metrics[`create${capitalized}Metrics`];
  if (typeof create !== 'function')
    throw new Error(`services/${name}/src/metrics.ts must export create${capitalized}Metrics`);
  const telemetry = (await import(pathToFileURL(telemetryPath).href)) as {
    createRegistry: (service: string) => { metrics(): Promise<string> };
  };
  const registry = telemetry.createRegistry(name);
  (create as (registry: unknown) => unknown)(registry);
  return registry.metrics();
}

/** A Kubernetes CPU quantity ('2', '500m', 1.5) in cores. */
export function cpuCores(quantity: string | number | undefined): number {
  const text = String(quantity ?? '');
  const match = /^(\d+(?:\.\d+)?)(m?)$/.exec(text);
  if (!match) throw new Error(`not a CPU quantity: ${text}`);
  return Number(match[1]) / (match[2] ? 1000 : 1);
}

const memoryUnits: Record<string, number> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

/** A Kubernetes memory quantity ('8Gi', '512Mi', '1G', bytes) in bytes. */
export function memoryBytes(quantity: string | number | undefined): number {
  const text = String(quantity ?? '');
  const match = /^(\d+(?:\.\d+)?)([kMGT]i?)?$/.exec(text);
  if (!match || !((match[2] ?? '') in memoryUnits)) throw new Error(`not a memory quantity: ${text}`);
  return Number(match[1]) * memoryUnits[match[2] ?? '']!;
}
