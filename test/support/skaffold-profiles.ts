/**
 * skaffold's profile application, for tests that cannot run skaffold (it is not installable here):
 * which profiles a command turns on, in skaffold v2's order, and what each does to a config.
 *
 * - Order (pkg/skaffold/schema/profiles.go, activatedProfiles): the profiles whose `activation`
 *   holds for the command, in config order, then those named with `-p`; `-p -name` removes one.
 *   An activation's `env` or `kubeContext` cannot be known here, so such an activation never holds.
 * - A profile's fields overlay the config's: objects field by field, a non-empty list replaces the
 *   config's list (so a profile that names `artifacts` restates all of them).
 * - Then its `patches` run as krishicks/yaml-patch runs them: RFC 6902 operations whose path may
 *   select list items by a field (`/build/artifacts/image=switchboard~1llm/...`, `~1` for `/`);
 *   such a path expands only through keys that exist, so it can replace but never add a key.
 */

export interface Activation {
  command?: string;
  env?: string;
  kubeContext?: string;
}
export interface PatchOperation {
  op?: string;
  path: string;
  value?: unknown;
}
export interface Profile {
  name: string;
  activation?: Activation[];
  requiresAllActivations?: boolean;
  patches?: PatchOperation[];
  [field: string]: unknown;
}
export interface Config {
  metadata?: { name?: string };
  profiles?: Profile[];
  [field: string]: unknown;
}

type Json = unknown;
const isObject = (value: Json): value is Record<string, Json> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** skaffold's `satisfies`: a leading `!` negates; otherwise equal, or a regular expression that matches. */
function satisfies(expected: string, actual: string): boolean {
  if (expected.startsWith('!')) return !satisfies(expected.slice(1), actual);
  return expected === actual || new RegExp(expected).test(actual);
}

function activationHolds(activation: Activation, command: string): boolean {
  if (activation.env !== undefined || activation.kubeContext !== undefined) return false;
  return activation.command === undefined || satisfies(activation.command, command);
}

/** The profiles `skaffold <command> -p <named…>` applies to this config, in the order applied. */
export function activatedProfiles(config: Config, command: string, named: readonly string[] = []): string[] {
  const activated: string[] = [];
  for (const profile of config.profiles ?? []) {
    const activations = profile.activation ?? [];
    if (activations.length === 0) continue;
    const holds = profile.requiresAllActivations
      ? activations.every((a) => activationHolds(a, command))
      : activations.some((a) => activationHolds(a, command));
    if (holds) activated.push(profile.name);
  }
  const known = new Set((config.profiles ?? []).map((p) => p.name));
  for (const name of named) {
    if (name.startsWith('-')) {
      const at = activated.indexOf(name.slice(1));
      if (at >= 0) activated.splice(at, 1);
    } else if (known.has(name) && !activated.includes(name)) activated.push(name);
    else if (!known.has(name))
      throw new Error(`skaffold module ${config.metadata?.name}: no profile ${name}`);
  }
  return activated;
}

function overlay(base: Json, over: Json): Json {
  if (Array.isArray(over)) return over.length > 0 ? structuredClone(over) : base;
  if (isObject(over) && isObject(base)) {
    const merged: Record<string, Json> = { ...base };
    for (const [key, value] of Object.entries(over)) merged[key] = overlay(base[key], value);
    return merged;
  }
  return over === undefined || over === null ? base : structuredClone(over);
}

const decode = (token: string) => token.replace(/~1/g, '/').replace(/~0/g, '~');

/** yaml-patch's recursive search for maps with key === value, from `node` (stopping at a match). */
function findAll(prefix: string[], key: string, value: string, node: Json): string[][] {
  if (isObject(node) && node[key] === value) return [prefix];
  const entries: [string, Json][] = Array.isArray(node)
    ? node.map((v, i) => [String(i), v])
    : isObject(node)
      ? Object.entries(node)
      : [];
  return entries.flatMap(([k, v]) => findAll([...prefix, k], key, value, v));
}

function child(node: Json, token: string): Json {
  if (Array.isArray(node)) return /^\d+$/.test(token) ? node[Number(token)] : undefined;
  return isObject(node) ? node[token] : undefined;
}

/** The concrete paths (token lists) an extended path expands to; each token must exist. */
function expand(document: Json, path: string): string[][] {
  let routes: { tokens: string[]; node: Json }[] = [{ tokens: [], node: document }];
  for (const raw of path.split('/').slice(1)) {
    const token = decode(raw);
    const kv = token.split('=');
    routes = routes.flatMap(({ tokens, node }) => {
      if (kv.length === 2) {
        return findAll(tokens, kv[0]!, kv[1]!, node).map((found) => ({
          tokens: found,
          node: found.slice(tokens.length).reduce(child, node),
        }));
      }
      const next = child(node, token);
      return next === undefined || next === null ? [] : [{ tokens: [...tokens, token], node: next }];
    });
  }
  return routes.map((r) => r.tokens);
}

function perform(document: Json, op: string, tokens: string[], value: Json, path: string): void {
  const last = tokens.at(-1);
  const parent = tokens.slice(0, -1).reduce(child, document);
  if (last === undefined || parent === undefined) throw new Error(`patch ${path}: no such path`);
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (op === 'add') parent.splice(index, 0, structuredClone(value));
    else if (op === 'replace' && index < parent.length) parent[index] = structuredClone(value);
    else if (op === 'remove') parent.splice(index, 1);
    else throw new Error(`patch ${op} ${path}: not applicable`);
  } else if (isObject(parent)) {
    if (op === 'add') parent[last] = structuredClone(value);
    else if (op === 'replace' && last in parent) parent[last] = structuredClone(value);
    else if (op === 'remove') delete parent[last];
    else throw new Error(`patch ${op} ${path}: no such key`);
  } else throw new Error(`patch ${path}: no such path`);
}

/** Runs one profile's patches on a document, as skaffold does after the overlay. */
export function applyPatches(document: Json, patches: readonly PatchOperation[]): Json {
  const patched = structuredClone(document);
  for (const patch of patches) {
    const op = patch.op ?? 'replace'; // skaffold's default
    if (patch.path.includes('=')) {
      const paths = expand(patched, patch.path);
      if (paths.length === 0) throw new Error(`patch ${patch.path}: could not expand pointer`);
      for (const tokens of paths) perform(patched, op, tokens, patch.value, patch.path);
    } else {
      perform(patched, op, patch.path.split('/').slice(1).map(decode), patch.value, patch.path);
    }
  }
  return patched;
}

/** One profile applied: its fields overlaid, then its patches. */
export function applyProfile(config: Config, name: string): Config {
  const profile = config.profiles?.find((p) => p.name === name);
  if (!profile) throw new Error(`skaffold module ${config.metadata?.name}: no profile ${name}`);
  const fields: Record<string, Json> = { ...profile };
  for (const key of ['name', 'activation', 'requiresAllActivations', 'patches']) delete fields[key];
  const overlaid = overlay(config, fields) as Config;
  return applyPatches(overlaid, profile.patches ?? []) as Config;
}

/** The config `skaffold <command> -p <named…>` works with: every activated profile, in order. */
export function applyProfiles<T extends object>(
  config: T,
  command: string,
  named: readonly string[] = [],
): T {
  const module = config as Config;
  return activatedProfiles(module, command, named).reduce(applyProfile, module) as T;
}
