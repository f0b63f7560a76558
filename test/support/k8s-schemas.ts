import { createRequire } from 'node:module';
import type { K8sObject } from './helm.js';

/**
 * Rendered objects checked against Kubernetes' own OpenAPI schemas (and the CRD schemas of KEDA and
 * the Prometheus Operator), offline, through the validators the npm packages `kubernetes-models`,
 * `@kubernetes-models/keda` and `@kubernetes-models/prometheus-operator` compile from them:
 * types, enums, formats, required fields — plus what those validators let through:
 *
 * - unknown fields. The schemas leave additionalProperties open, so a misspelt field passes their
 *   validators while the API server drops it (or, with server-side field validation, rejects it).
 *   Each field is probed with the same validators: a value no schema type accepts is put in its
 *   place, and a field the schema knows reports that value; a field it does not know stays silent.
 *   (A field whose schema takes any value, x-kubernetes-preserve-unknown-fields, would look unknown
 *   too; no field the chart renders is one.)
 * - pre-release versions of built-in APIs: every API Kubernetes has removed was a beta, and betas
 *   are off by default on clusters since 1.24.
 * - the names and label syntax the API server checks beyond the schema (apimachinery's validation).
 *
 * A kind without a schema is itself a violation, unless `uncheckedKinds` names it with the reason.
 */

export interface Violation {
  /** Where in the object, as `spec.template.spec.containers[0].image`. */
  path: string;
  message: string;
}

/** `apiVersion/kind` → why no schema checks it. Empty: every kind the chart renders has one. */
export const uncheckedKinds: Readonly<Record<string, string>> = {};

/** Custom resource API groups → the package with their CRD schemas; every other group is built in. */
const crdPackages: Readonly<Record<string, string>> = {
  'keda.sh': '@kubernetes-models/keda',
  'monitoring.coreos.com': '@kubernetes-models/prometheus-operator',
};

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}
interface Model {
  validate(): void;
}
type ModelClass = new (data: unknown) => Model;

const apiGroup = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

// The packages' CommonJS builds: loaded synchronously, so a check fits `objects.flatMap(…)`.
const require = createRequire(import.meta.url);
const models = new Map<string, ModelClass | undefined>();

/** The model class of an apiVersion and kind, or undefined when no package has its schema. */
function modelFor(apiVersion: string, kind: string): ModelClass | undefined {
  const key = `${apiVersion}/${kind}`;
  if (!models.has(key)) {
    const pkg = crdPackages[apiGroup(apiVersion)] ?? 'kubernetes-models';
    let model: ModelClass | undefined;
    try {
      const module = require(`${pkg}/${apiVersion}/${kind}`) as Record<string, unknown>;
      model = module[kind] as ModelClass | undefined;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED' && code !== 'MODULE_NOT_FOUND') throw error;
    }
    models.set(key, model);
  }
  return models.get(key);
}

/** The schema errors of the validator, none when it passes. */
function schemaErrors(Model: ModelClass, data: unknown): AjvError[] {
  try {
    new Model(data).validate();
    return [];
  } catch (error) {
    const errors = (error as { errors?: AjvError[] }).errors;
    if (!errors) throw error;
    return errors;
  }
}

type Token = string | number;

const pointer = (tokens: Token[]) =>
  tokens.map((t) => `/${String(t).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

/** `spec.containers[0].image`, `metadata.labels["app.kubernetes.io/name"]`. */
export function formatPath(tokens: Token[]): string {
  let path = '';
  for (const token of tokens) {
    if (typeof token === 'number') path += `[${token}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(token)) path += path ? `.${token}` : token;
    else path += `[${JSON.stringify(token)}]`;
  }
  return path || '(the object)';
}

/** The tokens of a JSON pointer into `root`, numbers where the pointer steps into an array. */
function tokensOf(root: unknown, instancePath: string): Token[] {
  const tokens: Token[] = [];
  let node = root;
  for (const raw of instancePath.split('/').slice(1)) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const step: Token = Array.isArray(node) ? Number(token) : token;
    tokens.push(step);
    node = node && typeof node === 'object' ? (node as Record<string, unknown>)[step] : undefined;
  }
  return tokens;
}

function describeError(error: AjvError): string {
  const { keyword, params } = error;
  if (keyword === 'type') return `must be ${String(params.type)}`;
  if (keyword === 'enum') return `must be one of ${JSON.stringify(params.allowedValues)}`;
  if (keyword === 'format') return `must be a valid ${String(params.format)}`;
  return error.message ?? `fails ${keyword} ${JSON.stringify(params)}`;
}

function schemaViolations(Model: ModelClass, object: K8sObject): Violation[] {
  return schemaErrors(Model, object).map((error) => {
    const tokens = tokensOf(object, error.instancePath);
    if (error.keyword === 'required') {
      return { path: formatPath([...tokens, String(error.params.missingProperty)]), message: 'is required' };
    }
    return { path: formatPath(tokens), message: describeError(error) };
  });
}

/** No schema type accepts a symbol: a field the schema knows reports it, an unknown one cannot. */
const probe = Symbol('not a JSON value');

/** Fields of `object` (at any depth) that its schema does not define. */
function unknownFields(Model: ModelClass, object: K8sObject): Violation[] {
  const violations: Violation[] = [];
  const visit = (node: unknown, at: Token[]) => {
    if (Array.isArray(node)) {
      node.forEach((item, i) => visit(item, [...at, i]));
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const probed = structuredClone(object) as unknown;
    let target = probed as Record<Token, unknown>;
    for (const token of at) target = target[token] as Record<Token, unknown>;
    for (const key of Object.keys(target)) target[key] = probe;
    const reported = schemaErrors(Model, probed).map((e) => e.instancePath);
    for (const [key, value] of Object.entries(node)) {
      const field = pointer([...at, key]);
      if (reported.some((p) => p === field || p.startsWith(`${field}/`))) visit(value, [...at, key]);
      else violations.push({ path: formatPath([...at, key]), message: 'is not a field of the schema' });
    }
  };
  visit(object, []);
  return violations;
}

// apimachinery's validation of names and labels, which the OpenAPI schemas do not carry.
const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const dns1035Label = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const qualifiedName = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
/** Kinds whose names become DNS labels (a Service's name is its DNS name). */
const labelNamedKinds: Readonly<Record<string, RegExp>> = { Service: dns1035Label, Namespace: dns1123Label };

function nameProblem(kind: string, name: unknown): string | undefined {
  if (typeof name !== 'string' || name === '') return 'is required';
  const label = labelNamedKinds[kind];
  if (label) return name.length <= 63 && label.test(name) ? undefined : `is not a DNS label: ${name}`;
  return name.length <= 253 && dns1123Subdomain.test(name) ? undefined : `is not a DNS subdomain: ${name}`;
}

function keyProblem(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const [prefix, name] = slash < 0 ? [undefined, key] : [key.slice(0, slash), key.slice(slash + 1)];
  if (prefix !== undefined && !(prefix.length <= 253 && dns1123Subdomain.test(prefix)))
    return `key prefix is not a DNS subdomain: ${key}`;
  if (!(name.length <= 63 && qualifiedName.test(name))) return `key is not a qualified name: ${key}`;
  return undefined;
}

function labelValueProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined; // the schema reports the type
  return value === '' || (value.length <= 63 && qualifiedName.test(value))
    ? undefined
    : `value is not a valid label value: ${value}`;
}

/** Label maps: metadata.labels at any depth, selectors' matchLabels, a Service's selector. */
function isLabelMap(at: Token[], kind: string): boolean {
  const key = at.at(-1);
  if (key === 'matchLabels') return true;
  if (key === 'labels' && at.at(-2) === 'metadata') return true;
  return kind === 'Service' && at.length === 2 && at[0] === 'spec' && key === 'selector';
}

function apiServerViolations(object: K8sObject): Violation[] {
  const violations: Violation[] = [];
  const nameIssue = nameProblem(object.kind, object.metadata?.name);
  if (nameIssue) violations.push({ path: 'metadata.name', message: nameIssue });
  const visit = (node: unknown, at: Token[]) => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach((item, i) => visit(item, [...at, i]));
    const labels = isLabelMap(at, object.kind);
    const annotations = at.at(-1) === 'annotations' && at.at(-2) === 'metadata';
    for (const [key, value] of Object.entries(node)) {
      const problem =
        labels || annotations
          ? (keyProblem(key) ?? (labels ? labelValueProblem(value) : undefined))
          : undefined;
      if (problem) violations.push({ path: formatPath([...at, key]), message: problem });
      else if (!labels && !annotations) visit(value, [...at, key]);
    }
  };
  visit(object, []);
  return violations;
}

/**
 * Every violation of one rendered object found by the checks above; empty when none finds one.
 * Kinds in `uncheckedKinds` get only the name and label checks.
 */
export function objectViolations(object: K8sObject): Violation[] {
  const { apiVersion, kind } = object;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string')
    return [{ path: '(the object)', message: 'has no apiVersion and kind' }];
  const violations = apiServerViolations(object);
  if (!crdPackages[apiGroup(apiVersion)] && /(alpha|beta)\d*$/.test(apiVersion))
    violations.push({ path: 'apiVersion', message: `${apiVersion} is not a GA Kubernetes API` });
  if (`${apiVersion}/${kind}` in uncheckedKinds) return violations;
  const Model = modelFor(apiVersion, kind);
  if (!Model) return [...violations, { path: 'kind', message: `no schema for ${apiVersion} ${kind}` }];
  return [...violations, ...schemaViolations(Model, object), ...unknownFields(Model, object)];
}

/** `Kind/name` of an object, for reports. */
export const objectId = (object: K8sObject) => `${String(object?.kind)}/${String(object?.metadata?.name)}`;
