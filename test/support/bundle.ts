// What the bundle tests share: a service's image read from deploy/docker/Dockerfile (and the shape
// every worker image has), the production install step (`pnpm … deploy /out`, then the prune of
// deploy/docker/prune-bundle.mjs) taken from its build and run into a temp folder with the
// workspace's own pnpm, the check that the deployed folder is
// self-contained (native libraries included), and a worker started from that folder up to
// grpc.health.v1 SERVING.
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { freePort } from '@switchboard/devcluster';
import { waitForServing } from '@switchboard/grpc';
import {
  dockerInstructions,
  resolveStage,
  parseDockerfile,
  serviceImage,
  type ServiceImage,
} from './dockerfile.js';
import { testClusterSecret } from './gateway.js';
import { serviceConfig } from './helm-checks.js';
import { spawnNode } from './processes.js';
import { repoRoot } from './helm.js';

/** The official Node image every build stage, and every CPU image, starts from (a supported LTS). */
export const nodeImage = 'node:24-bookworm-slim';

/** The packages of an image's `apt-get install`s, sorted (their options left out). */
export function aptPackages(lines: readonly string[]): string[] {
  const installs = lines.filter((l) => /apt-get install/.test(l));
  assert.ok(installs.length > 0, 'an apt-get install');
  return installs
    .flatMap((install) => /apt-get install (.*?)(?: &&|$)/.exec(install)![1]!.split(' '))
    .filter((w) => !w.startsWith('-'))
    .sort();
}

/** The variables that ENV instructions set (`ENV A=1 B=2`), later ones winning. */
export function dockerEnv(lines: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of lines.filter((l) => l.startsWith('ENV '))) {
    for (const pair of line.slice('ENV '.length).split(' ')) {
      const at = pair.indexOf('=');
      assert.ok(at > 0, `ENV in the NAME=value form: ${line}`);
      env[pair.slice(0, at)] = pair.slice(at + 1);
    }
  }
  return env;
}

/** The ports of an image's EXPOSE, sorted. */
export function dockerExposed(lines: readonly string[]): number[] {
  const expose = lines.filter((l) => l.startsWith('EXPOSE '));
  assert.equal(expose.length, 1, 'one EXPOSE');
  return expose[0]!
    .slice('EXPOSE '.length)
    .split(' ')
    .map(Number)
    .sort((a, b) => a - b);
}

/**
 * The shape every image has: its service built alone (a frozen-lockfile install and build of this
 * service and what it references) on the pinned Node image, in a stage of its own; its runtime
 * packages from the distribution without recommends (tini among them); nothing downloaded by hand
 * anywhere in the template; user 10001 with HOME on /tmp; tini as PID 1 running `node
 * dist/main.js`; and exactly these ports exposed.
 */
export function assertImageShape(
  image: ServiceImage,
  expected: { packages: readonly string[]; exposed: readonly number[] },
): void {
  const { service, build, runtime } = image;
  assert.equal(build.base, nodeImage, 'built on the pinned Node image');
  assert.ok(!runtime.stages.some((s) => build.stages.includes(s)), 'built in stages the image leaves behind');
  assert.ok(build.lines.some((l) => /pnpm install --frozen-lockfile/.test(l)));
  assert.ok(build.lines.some((l) => l.includes(`--filter "{services/${service}}..."`)));
  assert.ok(build.lines.some((l) => l.includes(`tsc -b services/${service} `)));
  const installs = runtime.lines.filter((l) => /apt-get install/.test(l));
  for (const install of installs) assert.match(install, /--no-install-recommends/);
  assert.deepEqual(aptPackages(runtime.lines), [...expected.packages, 'tini'].sort());
  for (const l of dockerInstructions()) {
    assert.doesNotMatch(l, /\bcurl\b|\bwget\b|ADD https?:/, `downloads nothing by hand: ${l}`);
  }
  assert.deepEqual(
    runtime.lines.filter((l) => l.startsWith('USER')),
    ['USER 10001:10001'],
  );
  assert.equal(dockerEnv(runtime.lines).HOME, '/tmp', 'HOME on the /tmp volume (read-only root filesystem)');
  assert.equal(runtime.lines.at(-2), 'ENTRYPOINT ["/usr/bin/tini", "--"]');
  assert.equal(runtime.lines.at(-1), 'CMD ["node", "dist/main.js"]');
  assert.deepEqual(
    dockerExposed(runtime.lines),
    [...expected.exposed].sort((a, b) => a - b),
  );
}

/**
 * The ports a worker image exposes: the worker's own default gRPC port (GRPC_PORT when unset; the
 * chart sets 50051) and its metrics port, from its compiled config loader.
 */
export async function workerDefaultPorts(service: string): Promise<number[]> {
  const config = await serviceConfig(service);
  assert.ok(config?.load, `services/${service} exports load<Name>Config`);
  const defaults = config.load({ CLUSTER_SECRET: testClusterSecret }) as {
    grpc: { port: number };
    metricsPort: number;
  };
  return [defaults.grpc.port, defaults.metricsPort];
}

/** The arguments of the image build's `pnpm … deploy /out`, minus the image-only store folder. */
export function dockerDeployArgs(image: ServiceImage): string[] {
  const runs = image.build.lines.filter((line) => line.startsWith('RUN') && / deploy \/out\b/.test(line));
  assert.equal(
    runs.length,
    1,
    `the ${image.variant} build of ${image.service} runs \`pnpm … deploy /out\` once`,
  );
  const command = runs[0]!
    .split('&&')
    .find((part) => / deploy \/out\b/.test(part))!
    .trim();
  const words = command.split(' ');
  assert.equal(words[0], 'pnpm');
  const args: string[] = [];
  for (let i = 1; i < words.length; i++) {
    if (words[i] === '--store-dir')
      i++; // the image's cache mount; here the workspace's own store
    else args.push(words[i]!.replace(/^"(.*)"$/, '$1'));
  }
  assert.equal(args.at(-1), '/out');
  return args.slice(0, -1);
}

/** The script every build runs on its deployed folder, right after `pnpm … deploy /out`. */
export const pruneScript = 'deploy/docker/prune-bundle.mjs';

/**
 * The image build's prune of its deployed folder: the step of the deploy's RUN right after the
 * deploy, `node deploy/docker/prune-bundle.mjs /out`.
 */
export function dockerPruneStep(image: ServiceImage): string[] {
  const run = image.build.lines.find((line) => line.startsWith('RUN') && / deploy \/out\b/.test(line))!;
  const steps = run.split('&&').map((part) => part.trim());
  const prune = steps.findIndex((part) => part.includes(pruneScript));
  assert.ok(prune > 0, `the ${image.variant} build of ${image.service} prunes its deployed folder`);
  const words = steps[prune]!.split(' ');
  assert.deepEqual(words, ['node', pruneScript, '/out']);
  return words.slice(1, -1);
}

/** The workspace's pinned pnpm (the test package's devDependency), run with this node. */
export function pnpmCli(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('pnpm')), 'bin', 'pnpm.cjs');
}

/**
 * Runs the deploy of a CPU image's build (`pnpm <args> <out>`) from the repository root, with the
 * build's CI and ONNXRUNTIME_NODE_INSTALL (skip) unless `env` says otherwise, then the build's prune
 * of that folder, and asserts both succeeded and the folder holds no other platform's ONNX Runtime
 * binary and no onnxruntime-web. Returns the deploy's arguments. (A CUDA build also fetches
 * onnxruntime-node's CUDA provider, which cannot be done here; assertGpuVariant checks its deploy
 * and prune are these otherwise.)
 */
export function runDockerDeploy(
  image: ServiceImage,
  out: string,
  env: Record<string, string> = {},
): string[] {
  assert.equal(image.variant, 'cpu', 'a CPU build');
  const args = [...dockerDeployArgs(image), out];
  assert.ok(args.includes('--prod'));
  const build = dockerEnv(image.build.lines);
  assert.equal(build.ONNXRUNTIME_NODE_INSTALL, 'skip');
  const result = spawnSync(process.execPath, [pnpmCli(), ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, CI: build.CI!, ONNXRUNTIME_NODE_INSTALL: build.ONNXRUNTIME_NODE_INSTALL, ...env },
    timeout: 180_000,
  });
  assert.equal(result.status, 0, `pnpm ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
  const prune = spawnSync(process.execPath, [...dockerPruneStep(image), out], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(prune.status, 0, `the prune of ${out} failed:\n${prune.stdout}\n${prune.stderr}`);
  assert.deepEqual(unusedRuntimeFiles(out), [], 'the deployed folder is pruned');
  return args;
}

/**
 * What a pruned folder must not hold: onnxruntime-web (Transformers.js's Node build has it inlined)
 * and onnxruntime-node binaries for another platform or architecture than this one.
 */
export function unusedRuntimeFiles(out: string): string[] {
  const store = join(out, 'node_modules', '.pnpm');
  if (!existsSync(store)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(store)) {
    if (entry.startsWith('onnxruntime-web@')) found.push(entry);
    if (!entry.startsWith('onnxruntime-node@')) continue;
    const bin = join(store, entry, 'node_modules', 'onnxruntime-node', 'bin');
    for (const napi of existsSync(bin) ? readdirSync(bin) : []) {
      for (const platform of readdirSync(join(bin, napi))) {
        for (const arch of readdirSync(join(bin, napi, platform))) {
          if (platform !== process.platform || arch !== process.arch)
            found.push(join(entry, napi, platform, arch));
        }
      }
    }
  }
  return found;
}

/** Every symlink under `dir` must point inside it: the folder is copied into the image alone. */
export function linksLeavingFolder(dir: string): string[] {
  const root = realpathSync(dir);
  const bad: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(path)) {
      const full = join(path, entry);
      const stat = lstatSync(full);
      if (stat.isSymbolicLink()) {
        let target: string;
        try {
          target = realpathSync(full);
        } catch {
          bad.push(`${relative(root, full)} (dangling)`);
          continue;
        }
        if (target !== root && !target.startsWith(root + sep))
          bad.push(`${relative(root, full)} -> ${target}`);
      } else if (stat.isDirectory()) walk(full);
    }
  };
  walk(root);
  return bad;
}

export interface BundledProcess {
  child: ChildProcess;
  output: () => string;
  /** The exit code and signal, once it has exited. */
  exited: Promise<[number | null, NodeJS.Signals | null]>;
}

/**
 * Starts `node dist/main.js` from a deployed folder as the image runs it: that folder as the
 * working directory and a bare environment (no HOME, production mode, the test CLUSTER_SECRET)
 * plus `env`. The process is killed when the test ends.
 */
export function startBundled(
  out: string,
  env: Record<string, string>,
  t: { after(fn: () => void): void },
): BundledProcess {
  const proc = spawnNode('bundled service', 'dist/main.js', {
    cwd: out,
    env: {
      PATH: '/usr/bin:/bin',
      HOME: join(out, '..', 'home-that-does-not-exist'),
      NODE_ENV: 'production',
      CLUSTER_SECRET: testClusterSecret,
      ...env,
    },
    stdin: 'pipe',
  });
  const { child } = proc;
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return { child, output: proc.output, exited: proc.exited };
}

/**
 * What a deployed folder must hold to run as an image: the service's build, the listed workspace
 * libraries and packages, none of the development-only ones, and no link leaving the folder.
 */
export function assertDeployedContents(
  out: string,
  expected: { libs: readonly string[]; shipped?: readonly string[]; notShipped: readonly string[] },
): void {
  assert.ok(existsSync(join(out, 'dist', 'main.js')));
  for (const lib of expected.libs) {
    assert.ok(
      existsSync(join(out, 'node_modules', '@switchboard', lib, 'dist')),
      `@switchboard/${lib} is copied in`,
    );
  }
  for (const dep of expected.shipped ?? []) {
    assert.ok(existsSync(join(out, 'node_modules', dep, 'package.json')), `${dep} is shipped`);
  }
  for (const dev of expected.notShipped) {
    assert.ok(!existsSync(join(out, 'node_modules', dev)), `${dev} is not shipped`);
  }
  assert.deepEqual(linksLeavingFolder(out), [], 'no link points outside the deployed folder');
}

export interface LinkedLibrary {
  /** The name the file asks for (its DT_NEEDED entry, or the loader and vDSO). */
  name: string;
  /** Where the dynamic loader finds it here (the name itself for the loader and the vDSO); null when it is not found. */
  path: string | null;
}

/** The shared libraries a native file (a `.node` addon, a `.so`) loads, as `ldd` resolves them. */
export function linkedLibraries(file: string): LinkedLibrary[] {
  const result = spawnSync('ldd', [file], { encoding: 'utf8' });
  assert.equal(result.status, 0, `ldd ${file}:\n${result.stdout}${result.stderr}`);
  return result.stdout
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const arrow = /^(\S+) => (not found|(\S+)(?: \(0x[0-9a-f]+\))?)$/.exec(line);
      if (arrow) return { name: arrow[1]!, path: arrow[3] ?? null };
      const direct = /^(\S+) \(0x[0-9a-f]+\)$/.exec(line);
      assert.ok(direct, `ldd ${file}: unexpected line ${line}`);
      // The loader by its absolute path, or the vDSO the kernel maps in.
      return { name: direct[1]!, path: direct[1]! };
    });
}

/** Every `.node` addon and `.so` library under `dir`, sorted (links are not followed). */
export function nativeFiles(dir: string): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && /\.(node|so(\.\d+)*)$/.test(entry.name)) found.push(full);
    }
  };
  walk(dir);
  return found.sort();
}

export interface BundledWorker extends BundledProcess {
  /** 127.0.0.1:<GRPC_PORT>. */
  address: string;
  /** GET /metrics of the worker's METRICS_PORT, as text (asserting 200). */
  metrics(): Promise<string>;
  /** SIGTERM (what tini forwards), then the exit code once the process is gone. */
  terminate(): Promise<number | null>;
}

/**
 * Starts a deployed worker (`startBundled`) on free loopback ports (GRPC_PORT, GRPC_HOST,
 * METRICS_PORT, LOG_LEVEL=warn, then `env`) and waits until grpc.health.v1 reports SERVING,
 * failing with the worker's output if it exits or reports anything else first.
 */
export async function startBundledWorker(
  out: string,
  env: Record<string, string>,
  t: { after(fn: () => void): void },
  options: { timeoutMs?: number } = {},
): Promise<BundledWorker> {
  assert.ok(existsSync(join(out, 'dist', 'main.js')), 'the deploy test ran first');
  const [port, metricsPort] = [await freePort(), await freePort()];
  const worker = startBundled(
    out,
    {
      GRPC_PORT: String(port),
      GRPC_HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'warn',
      ...env,
    },
    t,
  );
  const address = `127.0.0.1:${port}`;
  const { exited } = worker;
  const status = await Promise.race([
    // Generous by default: other test files may share the cores.
    waitForServing(address, { timeoutMs: options.timeoutMs ?? 60_000 }),
    exited.then(([code, signal]) => `exited (${String(code ?? signal)})`),
  ]);
  assert.equal(status, 'SERVING', `the worker did not report SERVING:\n${worker.output()}`);
  return {
    ...worker,
    address,
    async metrics() {
      const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      assert.equal(response.status, 200);
      return response.text();
    },
    async terminate() {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGTERM');
      const [code] = await exited;
      return code;
    },
  };
}

/**
 * The CPU image of a model worker (llm, whisper, diffusion, animation): the image shape on the
 * Node image with exactly tini and `packages` from apt, models read from /models, and
 * onnxruntime-node's install script skipped (no CUDA download, no CUDA base). Returns the image's
 * ENV for further checks.
 */
export async function assertCpuModelImage(
  service: string,
  packages: readonly string[] = [],
): Promise<Record<string, string>> {
  const image = serviceImage(service, 'cpu');
  assertImageShape(image, { packages, exposed: await workerDefaultPorts(service) });
  assert.equal(image.runtime.base, nodeImage);
  const env = dockerEnv(image.runtime.lines);
  assert.equal(env.MODEL_DIR, '/models');
  assert.equal(env.ORT_EXECUTION_PROVIDERS, undefined, 'the chart sets cpu');
  assert.equal(dockerEnv(image.build.lines).ONNXRUNTIME_NODE_INSTALL, 'skip');
  assert.ok(!image.build.lines.some((l) => /only-built-dependencies/.test(l)), 'no install script runs');
  return env;
}

/**
 * A model worker's CUDA variant: the CPU image's worker and packages (plus ca-certificates) on a
 * CUDA 12 runtime base with the official image's Node and onnxruntime-node's CUDA provider (its
 * install script allowed, the provider's library checked for in the deployed folder), the same ENV
 * but for the provider list, and the CPU image's deploy plus that one install script — so the CPU
 * bundle test stands for both images.
 */
export async function assertGpuVariant(service: string, packages: readonly string[] = []): Promise<void> {
  const cpu = serviceImage(service, 'cpu');
  const gpu = serviceImage(service, 'cuda');
  assertImageShape(gpu, {
    packages: [...packages, 'ca-certificates'],
    exposed: await workerDefaultPorts(service),
  });
  assert.match(gpu.runtime.base, /^nvidia\/cuda:12\.\S*runtime/);
  const node = gpu.runtime.lines
    .map((l) => /^COPY --from=(\S+) \/usr\/local\/bin\/node \/usr\/local\/bin\/node$/.exec(l)?.[1])
    .filter((stage) => stage !== undefined);
  assert.equal(node.length, 1, 'Node copied into the CUDA image');
  assert.equal(
    resolveStage(parseDockerfile(), { SERVICE: service, VARIANT: 'cuda' }, node[0]).base,
    nodeImage,
  );
  // The provider comes from the deployed onnxruntime-node's own install script, run by hand (pnpm
  // runs no dependency install script), after which the build checks the library is there.
  const deploy = gpu.build.lines.find((l) => / deploy \/out\b/.test(l))!;
  const steps = deploy.split('&&').map((s) => s.trim());
  const install = steps.indexOf(
    'ONNXRUNTIME_NODE_INSTALL=cuda12 node /out/node_modules/onnxruntime-node/script/install.js',
  );
  assert.ok(install > 0, `the build runs onnxruntime-node's install script for CUDA 12:\n${deploy}`);
  assert.ok(
    steps
      .slice(install)
      .some((s) => /^\{ test -n "\$\(find \/out\/node_modules .*libonnxruntime_providers_cuda\.so/.test(s)),
    'then checks the deployed folder holds the CUDA provider',
  );
  assert.ok(
    !gpu.build.lines.some((l) => /only-built-dependencies/.test(l)),
    'no pnpm setting it would ignore',
  );
  assert.deepEqual(dockerPruneStep(gpu), dockerPruneStep(cpu));
  const env = dockerEnv(gpu.runtime.lines);
  assert.equal(env.ORT_EXECUTION_PROVIDERS, 'cuda,cpu');
  assert.deepEqual(
    { ...env, ORT_EXECUTION_PROVIDERS: undefined },
    { ...dockerEnv(cpu.runtime.lines), ORT_EXECUTION_PROVIDERS: undefined },
  );
  assert.deepEqual(dockerDeployArgs(gpu), dockerDeployArgs(cpu));
}
