// What the bundle tests share: a service's Dockerfile read as instructions (and the shape every
// worker image has), the production install step (`pnpm … deploy /out`) taken from it and run into
// a temp folder with the workspace's own pnpm, the check that the deployed folder is
// self-contained (native libraries included), and a worker started from that folder up to
// grpc.health.v1 SERVING.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { freePort } from '@switchboard/devcluster';
import { waitForServing } from '@switchboard/grpc';
import { testClusterSecret } from './gateway.js';
import { serviceConfig } from './helm-checks.js';
import { repoRoot } from './helm.js';

/** services/<service>/<file>: the Dockerfile of one service (`Dockerfile.gpu` for a variant). */
export function serviceDockerfile(service: string, file = 'Dockerfile'): string {
  return join(repoRoot, 'services', service, file);
}

/** The Dockerfile with continuation lines joined and comment lines dropped. */
export function dockerInstructions(dockerfilePath: string): string[] {
  const lines = readFileSync(dockerfilePath, 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'));
  return lines
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}

/** The instructions of the last stage (from its FROM on): what the image runs. */
export function runtimeStage(lines: readonly string[]): string[] {
  const from = lines.findLastIndex((l) => l.startsWith('FROM '));
  assert.ok(from >= 0, 'a FROM');
  return lines.slice(from);
}

/** The packages of the runtime stage's `apt-get install`, sorted (its options left out). */
export function aptPackages(lines: readonly string[]): string[] {
  const installs = runtimeStage(lines).filter((l) => /apt-get install/.test(l));
  assert.equal(installs.length, 1, 'one apt-get install, in the runtime stage');
  const words = /apt-get install (.*?)(?: &&|$)/.exec(installs[0]!)![1]!.split(' ');
  return words.filter((w) => !w.startsWith('-')).sort();
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

/** The ports of the Dockerfile's EXPOSE, sorted. */
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
 * The shape every worker image has (services/llm/Dockerfile is the model): multi-stage from the
 * pinned Node image, a frozen-lockfile install and build of this worker alone, its runtime packages
 * from the distribution without recommends (tini among them), nothing downloaded by hand, user
 * 10001, tini as PID 1 running `node dist/main.js`, and exactly these ports exposed.
 */
export function assertWorkerImageShape(
  lines: readonly string[],
  expected: { service: string; packages: readonly string[]; exposed: readonly number[] },
): void {
  const { service } = expected;
  assert.ok(lines.filter((l) => l.startsWith('FROM')).length >= 2, 'multi-stage');
  assert.ok(lines.some((l) => l.startsWith('ARG NODE_IMAGE=node:20-bookworm-slim')));
  assert.ok(lines.some((l) => /pnpm install --frozen-lockfile/.test(l)));
  assert.ok(lines.some((l) => l.includes(`--filter "@switchboard/${service}..."`)));
  assert.ok(lines.some((l) => l.includes(`tsc -b services/${service} `)));
  const runtime = runtimeStage(lines);
  const installs = runtime.filter((l) => /apt-get install/.test(l));
  assert.equal(installs.length, 1, 'one apt-get install, in the runtime stage');
  assert.match(installs[0]!, /--no-install-recommends/);
  for (const pkg of ['tini', ...expected.packages]) {
    assert.match(installs[0]!, new RegExp(`\\s${pkg}(\\s|$)`), `installs ${pkg}`);
  }
  for (const l of lines) {
    assert.doesNotMatch(l, /\bcurl\b|\bwget\b|ADD https?:/, `downloads nothing by hand: ${l}`);
  }
  assert.deepEqual(
    lines.filter((l) => l.startsWith('USER')),
    ['USER 10001:10001'],
  );
  assert.equal(dockerEnv(runtime).HOME, '/tmp', 'HOME on the /tmp volume (read-only root filesystem)');
  assert.ok(lines.includes('ENTRYPOINT ["/usr/bin/tini", "--"]'));
  assert.ok(lines.includes('CMD ["node", "dist/main.js"]'));
  assert.deepEqual(
    dockerExposed(lines),
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

/** The arguments of the Dockerfile's `pnpm … deploy /out`, minus the image-only store folder. */
export function dockerDeployArgs(dockerfilePath: string): string[] {
  const run = dockerInstructions(dockerfilePath).find(
    (line) => line.startsWith('RUN') && / deploy \/out\b/.test(line),
  );
  assert.ok(run, `${relative(repoRoot, dockerfilePath)} runs \`pnpm … deploy /out\``);
  const command = run
    .split('&&')
    .find((part) => / deploy \/out\b/.test(part))!
    .trim();
  const words = command.split(' ');
  assert.equal(words[0], 'pnpm');
  const args: string[] = [];
  for (let i = 1; i < words.length; i++) {
    if (words[i] === '--store-dir')
      i++; // the image's cache mount; here the workspace's own store
    else args.push(words[i]!);
  }
  assert.equal(args.at(-1), '/out');
  return args.slice(0, -1);
}

/** The workspace's pinned pnpm (the test package's devDependency), run with this node. */
export function pnpmCli(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('pnpm')), 'bin', 'pnpm.cjs');
}

/**
 * Runs the Dockerfile's deploy (`pnpm <args> <out>`) from the repository root, as the image's build
 * stage does (CI=true, ONNXRUNTIME_NODE_INSTALL=skip unless `env` says otherwise), and asserts it
 * succeeded. Returns the arguments it ran with.
 */
export function runDockerDeploy(
  dockerfilePath: string,
  out: string,
  env: Record<string, string> = {},
): string[] {
  const args = [...dockerDeployArgs(dockerfilePath), out];
  assert.ok(args.includes('--prod'));
  const result = spawnSync(process.execPath, [pnpmCli(), ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, CI: 'true', ONNXRUNTIME_NODE_INSTALL: 'skip', ...env },
    timeout: 180_000,
  });
  assert.equal(result.status, 0, `pnpm ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
  return args;
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
  child: ChildProcessWithoutNullStreams;
  output: () => string;
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
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: out,
    env: {
      PATH: '/usr/bin:/bin',
      HOME: join(out, '..', 'home-that-does-not-exist'),
      NODE_ENV: 'production',
      CLUSTER_SECRET: testClusterSecret,
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return { child, output: () => output };
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
  const exited = once(worker.child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const status = await Promise.race([
    waitForServing(address, { timeoutMs: options.timeoutMs ?? 30_000 }),
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
 * The CPU image of a model worker (llm, whisper, diffusion): the worker image shape with exactly
 * tini and `packages` from apt, models read from /models, and onnxruntime-node's install script
 * skipped (no CUDA download, no CUDA base). Returns the runtime stage's ENV for further checks.
 */
export async function assertCpuModelImage(
  service: string,
  packages: readonly string[] = [],
): Promise<Record<string, string>> {
  const lines = dockerInstructions(serviceDockerfile(service));
  assertWorkerImageShape(lines, { service, packages, exposed: await workerDefaultPorts(service) });
  assert.deepEqual(aptPackages(lines), [...packages, 'tini'].sort());
  const env = dockerEnv(runtimeStage(lines));
  assert.equal(env.MODEL_DIR, '/models');
  assert.ok(lines.some((l) => /ONNXRUNTIME_NODE_INSTALL=skip/.test(l)));
  assert.ok(!lines.some((l) => /ONNXRUNTIME_NODE_INSTALL=cuda/.test(l)));
  assert.ok(!lines.some((l) => l.startsWith('FROM') && /cuda/i.test(l)));
  return env;
}

/**
 * A model worker's Dockerfile.gpu: the CPU image's worker and packages (plus ca-certificates) on
 * a CUDA 12 runtime base with onnxruntime-node's CUDA provider, the same ENV but for the provider
 * list, and the CPU image's deploy plus that one install script — so the CPU bundle test stands
 * for both images.
 */
export async function assertGpuVariant(service: string, packages: readonly string[] = []): Promise<void> {
  const cpuDockerfile = serviceDockerfile(service);
  const gpuDockerfile = serviceDockerfile(service, 'Dockerfile.gpu');
  const lines = dockerInstructions(gpuDockerfile);
  assertWorkerImageShape(lines, {
    service,
    packages: [...packages, 'ca-certificates'],
    exposed: await workerDefaultPorts(service),
  });
  assert.deepEqual(aptPackages(lines), [...packages, 'ca-certificates', 'tini'].sort());
  assert.ok(lines.some((l) => /^ARG CUDA_IMAGE=nvidia\/cuda:12\.\S*runtime/.test(l)));
  assert.ok(lines.includes('FROM ${CUDA_IMAGE} AS runtime'), 'the runtime stage is the CUDA image');
  assert.ok(lines.some((l) => /ONNXRUNTIME_NODE_INSTALL=cuda12/.test(l)));
  assert.ok(!lines.some((l) => /ONNXRUNTIME_NODE_INSTALL=skip/.test(l)));
  const env = dockerEnv(runtimeStage(lines));
  assert.equal(env.ORT_EXECUTION_PROVIDERS, 'cuda,cpu');
  assert.deepEqual(
    { ...env, ORT_EXECUTION_PROVIDERS: undefined },
    { ...dockerEnv(runtimeStage(dockerInstructions(cpuDockerfile))), ORT_EXECUTION_PROVIDERS: undefined },
  );
  assert.deepEqual(
    dockerDeployArgs(gpuDockerfile).filter((a) => a !== '--config.only-built-dependencies=onnxruntime-node'),
    dockerDeployArgs(cpuDockerfile),
  );
}
