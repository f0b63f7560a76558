import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { deepFreeze, type DeepReadonly } from './freeze.js';

/** Thrown when the environment is wrong; names every bad variable at once, not just the first. */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** `<NAME>_FILE` names a file holding `<NAME>`'s value. */
export const FILE_SUFFIX = '_FILE';

/**
 * Reads a process's configuration once: the schema's keys are environment variable names, its
 * output is whatever shape the service wants. The only place that touches `process.env`.
 *
 * Any variable the schema reads may instead be given as `<NAME>_FILE`, the path of a file whose
 * contents (one trailing newline dropped) are the value: that is how a Kubernetes Secret mounted
 * as a file reaches a process without ever being in its environment, where every child process
 * and `/proc/<pid>/environ` would see it.
 */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined> = process.env,
): DeepReadonly<z.output<S>> {
  // Empty strings mean "unset", as they do in a shell or a Helm value left blank.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const problems: string[] = [];
  for (const name of variableNames(schema)) {
    const path = present[`${name}${FILE_SUFFIX}`];
    if (path === undefined) continue;
    if (present[name] !== undefined) {
      problems.push(`${name}: give either ${name} or ${name}${FILE_SUFFIX}, not both`);
      continue;
    }
    try {
      present[name] = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      problems.push(`${name}${FILE_SUFFIX}: cannot read ${path} (${(error as NodeJS.ErrnoException).code})`);
    }
  }
  const result = schema.safeParse(present);
  if (!result.success) {
    problems.push(
      ...result.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`),
    );
  }
  if (problems.length > 0 || !result.success) throw new ConfigError(problems);
  return deepFreeze(result.data) as DeepReadonly<typeof result.data>;
}

/** The variable names an env schema reads: the keys of its object, under any transforms. */
function variableNames(schema: z.ZodType): string[] {
  let current: unknown = schema;
  for (let depth = 0; depth < 8 && current !== undefined; depth++) {
    const node = current as {
      shape?: Record<string, unknown>;
      in?: unknown;
      _zod?: { def?: { innerType?: unknown } };
    };
    if (node.shape !== undefined) return Object.keys(node.shape);
    current = node.in ?? node._zod?.def?.innerType;
  }
  return [];
}
