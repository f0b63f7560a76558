// deploy/docker/Dockerfile read as BuildKit would build it for one set of build args: which stages
// a target depends on, from which base image, with which instructions (the args filled in). There
// is no Docker daemon in the tests, so images are checked from these instructions; the bundle tests
// then run the build's `pnpm deploy --prod` for real.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './helm.js';

/** The one template every image is built from. */
export const dockerfilePath = join(repoRoot, 'deploy', 'docker', 'Dockerfile');

/** The Dockerfile's VARIANT values: the official Node image, or NVIDIA's CUDA runtime. */
export type Variant = 'cpu' | 'cuda';

export interface Stage {
  /** Its `AS` name, if any. */
  name: string | undefined;
  /** Its FROM instruction, as written. */
  from: string;
  /** Its instructions after FROM, as written. */
  lines: string[];
}

export interface ParsedDockerfile {
  /** The ARGs declared before the first FROM (usable in FROM), with their defaults. */
  globalArgs: Map<string, string | undefined>;
  stages: Stage[];
}

export interface ResolvedStage {
  /** The image the chain of stages starts from (e.g. node:24-bookworm-slim). */
  base: string;
  /** The stages walked, from the one on top of `base` to the target. */
  stages: string[];
  /** Their instructions in build order (each FROM included), the build args filled in. */
  lines: string[];
}

/** A Dockerfile's instructions: continuation lines joined, comments and blank lines dropped. */
export function dockerInstructions(path: string = dockerfilePath): string[] {
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'));
  return lines
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}

export function parseDockerfile(path: string = dockerfilePath): ParsedDockerfile {
  const globalArgs = new Map<string, string | undefined>();
  const stages: Stage[] = [];
  for (const line of dockerInstructions(path)) {
    if (line.startsWith('FROM ')) {
      const from = /^FROM (\S+)(?: AS (\S+))?$/i.exec(line);
      assert.ok(from, `a FROM without options: ${line}`);
      stages.push({ name: from[2], from: from[1]!, lines: [] });
    } else if (stages.length > 0) {
      stages.at(-1)!.lines.push(line);
    } else {
      const arg = /^ARG (\w+)(?:=(\S*))?$/.exec(line);
      assert.ok(arg, `only ARGs come before the first FROM: ${line}`);
      globalArgs.set(arg[1]!, arg[2]);
    }
  }
  assert.ok(stages.length > 0, 'a FROM');
  return { globalArgs, stages };
}

/** `$NAME` and `${NAME}` of the given variables replaced by their values. */
function substitute(text: string, values: ReadonlyMap<string, string>): string {
  return text.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, braced?: string, bare?: string) => {
    const value = values.get((braced ?? bare)!);
    return value ?? whole;
  });
}

/**
 * The chain of stages BuildKit builds for `target` (the last stage when omitted) with these build
 * args: each FROM resolved through the global ARGs (a required one left unset fails), then followed
 * to an earlier stage of that name or else taken as the base image. Within a stage, an `ARG NAME`
 * brings that build arg (or its default) into scope for the instructions after it, and is written
 * `ARG NAME=<value>`.
 */
export function resolveStage(
  dockerfile: ParsedDockerfile,
  buildArgs: Readonly<Record<string, string>>,
  target?: string,
): ResolvedStage {
  const global = new Map<string, string>();
  for (const [name, fallback] of dockerfile.globalArgs) {
    const value = buildArgs[name] ?? fallback;
    if (value !== undefined) global.set(name, value);
  }
  const stageIndex = (name: string, before: number) =>
    dockerfile.stages.findIndex((s, i) => i < before && s.name?.toLowerCase() === name.toLowerCase());

  const walk = (index: number, seen: string[]): ResolvedStage => {
    const stage = dockerfile.stages[index]!;
    const unset = [...stage.from.matchAll(/\$\{?(\w+)\}?/g)].map((m) => m[1]!).filter((n) => !global.has(n));
    assert.deepEqual(unset, [], `FROM ${stage.from}: build args without a value`);
    const from = substitute(stage.from, global);
    const scoped = new Map<string, string>();
    const lines = [`FROM ${from}${stage.name ? ` AS ${stage.name}` : ''}`];
    for (const line of stage.lines) {
      const arg = /^ARG (\w+)(?:=(\S*))?$/.exec(line);
      if (arg) {
        // Written with its value: from here on the stage's cache depends on it.
        const value = buildArgs[arg[1]!] ?? (arg[2] !== undefined ? arg[2] : global.get(arg[1]!));
        if (value !== undefined) scoped.set(arg[1]!, value);
        lines.push(value === undefined ? line : `ARG ${arg[1]}=${value}`);
      } else lines.push(substitute(line, scoped));
    }
    const name = stage.name ?? `#${index}`;
    assert.ok(!seen.includes(name), `stages refer to each other in a loop: ${[...seen, name].join(' → ')}`);
    const parent = stageIndex(from, index);
    if (parent < 0) return { base: from, stages: [name], lines };
    const below = walk(parent, [...seen, name]);
    return { base: below.base, stages: [...below.stages, name], lines: [...below.lines, ...lines] };
  };

  const index = target === undefined ? dockerfile.stages.length - 1 : stageIndex(target, Infinity);
  assert.ok(index >= 0, `no stage ${target}`);
  return walk(index, []);
}

export interface ServiceImage {
  service: string;
  variant: Variant;
  /** The image itself: the default target, from its base image on. */
  runtime: ResolvedStage;
  /** The stage whose /out the image copies to /app: the build of the service's folder. */
  build: ResolvedStage;
}

/**
 * The image `--build-arg SERVICE=<service> --build-arg VARIANT=<variant>` gives (the default
 * target), as skaffold.yaml builds it. The service must have a stage of its name in the chain, not
 * fall through to a base image of that name.
 */
export function serviceImage(service: string, variant: Variant = 'cpu'): ServiceImage {
  const dockerfile = parseDockerfile();
  const buildArgs = { SERVICE: service, VARIANT: variant };
  const runtime = resolveStage(dockerfile, buildArgs);
  assert.ok(runtime.stages.includes(service), `deploy/docker/Dockerfile has no stage ${service}`);
  const copies = runtime.lines
    .map((l) => /^COPY --from=(\S+) \/out \/app$/.exec(l)?.[1])
    .filter((s) => s !== undefined);
  assert.equal(copies.length, 1, 'the image copies one built folder to /app');
  return { service, variant, runtime, build: resolveStage(dockerfile, buildArgs, copies[0]) };
}
