import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Secret, Service } from 'kubernetes-models/v1';
import { repoRoot, type K8sObject } from './helm.js';

/** Reading helpers and Kubernetes-schema validation for the chart tests. */

export const workerNames = ['llm', 'whisper', 'diffusion', 'animation', 'browser'] as const;
export type WorkerName = (typeof workerNames)[number];
export const modelWorkers: readonly WorkerName[] = ['llm', 'whisper', 'diffusion'];

interface Validatable {
  validate(): void;
}
type ModelClass = new (data: never) => Validatable;

/** Every kind the chart may render, with the model that validates it (Kubernetes 1.3x / KEDA v2 schemas). */
const models: Record<string, ModelClass> = {
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'v1/Secret': Secret,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/Ingress': Ingress,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
};

/** Problems with one rendered object: missing identity, unknown kind, schema errors. */
export function k8sProblems(object: K8sObject): string[] {
  const id = `${object?.kind}/${object?.metadata?.name}`;
  if (typeof object?.apiVersion !== 'string' || typeof object.kind !== 'string')
    return [`${id}: no apiVersion/kind`];
  if (typeof object.metadata?.name !== 'string' || object.metadata.name === '')
    return [`${id}: no metadata.name`];
  const problems: string[] = [];
  if (object.metadata.name.length > 63 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(object.metadata.name)) {
    problems.push(`${id}: name is not a DNS-1123 label`);
  }
  const Model = models[`${object.apiVersion}/${object.kind}`];
  if (!Model) return [...problems, `${id}: ${object.apiVersion} ${object.kind} has no schema in this test`];
  try {
    new Model(object as never).validate();
  } catch (error) {
    problems.push(`${id}: ${(error as Error).message}`);
  }
  return problems;
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
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  ports?: { name?: string; containerPort: number }[];
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
  };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  tolerations?: { key?: string; operator?: string; effect?: string }[];
  nodeSelector?: Record<string, string>;
  volumes?: { name: string; emptyDir?: object; persistentVolumeClaim?: { claimName: string } }[];
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
  podSelector?: object;
  namespaceSelector?: object;
}
interface NetworkPolicyObject extends K8sObject {
  spec: {
    podSelector: { matchLabels?: Record<string, string> };
    policyTypes: string[];
    ingress?: { from?: PolicyPeer[]; ports?: object[] }[];
    egress?: { to?: PolicyPeer[]; ports?: object[] }[];
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
