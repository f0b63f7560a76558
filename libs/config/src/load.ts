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

/**
 * Reads a process's configuration once: the schema's keys are environment variable names, its
 * output is whatever shape the service wants. The only place that touches `process.env`.
 */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined> = process.env,
): DeepReadonly<z.output<S>> {
  // Empty strings mean "unset", as they do in a shell or a Helm value left blank.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(present);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`),
    );
  }
  return deepFreeze(result.data) as DeepReadonly<typeof result.data>;
}
