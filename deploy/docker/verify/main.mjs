#!/usr/bin/env node
// npm run images:verify: builds Switchboard's CPU images from deploy/docker/Dockerfile, unchanged,
// with buildah (no Docker daemon or image registry is needed: the Node base image is a stand-in
// built here, node-base.mjs), starts each image's process until it is ready (a worker's
// grpc.health.v1 reports SERVING; the gateway answers /healthz and /readyz), and prints each
// image's size. Exits non-zero on any failure. See README.md, "Container images", for what this
// proves and what it cannot. Needs root and the built workspace (npm run images:verify runs the
// set-up first: the development model and the brokers come from the workspace's own libraries).
//
// Usage: node deploy/docker/verify/main.mjs [--only gateway,llm,browser,llm-dev]
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildah, buildahCapture, ensureHostTools, log, repoRoot, stateDir } from './host.mjs';
import { dockerfileDefault, ensureNodeBase, qualified, stagesNamedThroughArgs } from './node-base.mjs';
import { runUntilReady } from './run-image.mjs';

const { fetch } = globalThis;
const lib = (name) => import(join(repoRoot, 'libs', name, 'dist', 'index.js'));
const { freePort, startNats, startRedis } = await lib('devcluster');
const { ensureDevModel } = await import(join(repoRoot, 'libs', 'devcluster', 'dist', 'dev-models.js'));
const { waitForServing } = await lib('grpc');

/** The uid:gid every image runs as (the Dockerfile's USER). */
const APP_UID = 10001;
const clusterSecret = randomBytes(24).toString('hex');

/** Each image checked: its build (the Dockerfile's build args and target) and how it is started. */
const images = [
  { key: 'gateway', service: 'gateway', start: startGateway },
  { key: 'llm', service: 'llm', start: startWorker },
  { key: 'browser', service: 'browser', start: startWorker },
  { key: 'llm-dev', service: 'llm', target: 'dev', start: startWorker },
];

function imageName({ key }) {
  return `localhost/switchboard/${key}:verify`;
}

function bud(image, target, tag) {
  buildah([
    'bud',
    '--pull=never',
    '--isolation=chroot',
    '--layers',
    '--ignorefile',
    'deploy/docker/Dockerfile.dockerignore',
    '-f',
    'deploy/docker/Dockerfile',
    '--build-arg',
    `SERVICE=${image.service}`,
    ...(target ? ['--target', target] : []),
    '-t',
    tag,
    '.',
  ]);
}

function buildImage(image) {
  log(
    `building ${imageName(image)} (SERVICE=${image.service}${image.target ? `, --target ${image.target}` : ''})`,
  );
  const started = Date.now();
  // buildah 1.28 works out which stages a target needs before it substitutes build args, so a stage
  // named through one (FROM build-${VARIANT}, FROM ${SERVICE}) is skipped and then looked up as an
  // image. BuildKit follows them. So those stages are built first, as targets of the same file,
  // and tagged with their stage names, which is what buildah then finds.
  for (const stage of stagesNamedThroughArgs({ SERVICE: image.service }))
    bud(image, stage, `localhost/${stage}`);
  bud(image, image.target, imageName(image));
  log(`built ${imageName(image)} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/** The command the image's ENTRYPOINT and CMD make (buildah run takes it explicitly). */
function imageCommand(image) {
  const config = JSON.parse(buildahCapture(['inspect', '--type', 'image', imageName(image)])).OCIv1.config;
  return [...(config.Entrypoint ?? []), ...(config.Cmd ?? [])];
}

/** A folder the app user can read (and write, when `writable`), for a volume. */
function appFolder(path, { writable = false } = {}) {
  mkdirSync(path, { recursive: true });
  chmodSync(path, writable ? 0o700 : 0o755);
  if (writable) chownSync(path, APP_UID, APP_UID);
  return path;
}

async function startWorker(image, context) {
  const port = await freePort();
  const env = {
    CLUSTER_SECRET: clusterSecret,
    GRPC_PORT: String(port),
    GRPC_HOST: '127.0.0.1',
    METRICS_PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
  };
  const volumes = [];
  if (image.service === 'llm') {
    // The development model, built by the workspace's own code (what `npm start` serves).
    const models = appFolder(join(stateDir, 'models'));
    await ensureDevModel(models, 'llm');
    chmodTree(models);
    volumes.push(`${models}:/models:ro`);
  }
  if (image.service === 'browser') {
    Object.assign(env, context.nats.env('browser'), {
      BROWSER_POOL_SIZE: '1',
      DEVTOOLS_PORT: String(await freePort()),
      DEVTOOLS_HOST: '127.0.0.1',
      OBJECT_STORE_DIR: '/tmp/objects',
    });
    volumes.push(`${context.credentials}:${context.credentials}:ro`);
  }
  const address = `127.0.0.1:${port}`;
  await runUntilReady(imageName(image), {
    command: imageCommand(image),
    env,
    volumes,
    ready: async () => (await waitForServing(address, { timeoutMs: 1_000 })) === 'SERVING',
  });
}

async function startGateway(image, context) {
  const port = await freePort();
  const env = {
    CLUSTER_SECRET: clusterSecret,
    GATEWAY_PORT: String(port),
    GATEWAY_HOST: '127.0.0.1',
    METRICS_PORT: String(await freePort()),
    ADMIN_TOKEN: randomBytes(24).toString('hex'),
    KEY_PEPPER: randomBytes(24).toString('hex'),
    LOG_LEVEL: 'warn',
    ...context.nats.env('gateway'),
    ...context.redis.env('gateway'),
  };
  const ok = async (path) => (await fetch(`http://127.0.0.1:${port}${path}`)).status === 200;
  await runUntilReady(imageName(image), {
    command: imageCommand(image),
    env,
    volumes: [`${context.credentials}:${context.credentials}:ro`],
    ready: async () => (await ok('/healthz')) && (await ok('/readyz')),
  });
}

/** Everything under `dir` readable by the app user (the model builder writes owner-only files). */
function chmodTree(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    chmodSync(path, entry.isDirectory() ? 0o755 : 0o644);
    if (entry.isDirectory()) chmodTree(path);
  }
}

/** Each image's name, size and whether it started, one row each, after the base's. */
function sizeTable(base, checked, failed) {
  const size = (name) => buildahCapture(['images', '--format', '{{.Size}}', name]).split('\n')[0];
  const rows = [
    [qualified(base), size(qualified(base)), 'the stand-in base'],
    ...checked.map((image) => [
      imageName(image),
      size(imageName(image)),
      failed.has(image.key) ? 'FAILED to start' : 'started, ready',
    ]),
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  return rows
    .map(([name, bytes, state]) => `  ${name.padEnd(width)}  ${bytes.padStart(9)}  ${state}`)
    .join('\n');
}

async function main() {
  const only = process.argv.includes('--only')
    ? process.argv[process.argv.indexOf('--only') + 1].split(',')
    : null;
  const selected = only ? images.filter((image) => only.includes(image.key)) : images;
  if (selected.length === 0) throw new Error(`--only names none of ${images.map((i) => i.key).join(', ')}`);
  ensureHostTools();
  const base = dockerfileDefault('NODE_IMAGE');
  const nodeVersion = ensureNodeBase(base);
  log(`base image ${base}: a local stand-in with Node ${nodeVersion}`);
  for (const image of selected) buildImage(image);
  // buildah leaves a working container behind for a stage it took as an image (see buildImage);
  // this storage is the script's own, so every container in it is one of those.
  buildahCapture(['rm', '--all']);

  // The brokers the gateway and the browser worker connect to, with a user per service; their
  // password files mounted into the containers, readable by the app user.
  const failed = new Set();
  const work = mkdtempSync(join(tmpdir(), 'sb-images-verify-'));
  const credentials = appFolder(join(work, 'credentials'), { writable: true });
  const [nats, redis] = await Promise.all([
    startNats({ credentialsDir: credentials }),
    startRedis({ credentialsDir: credentials }),
  ]);
  try {
    for (const file of readdirSync(credentials)) chownSync(join(credentials, file), APP_UID, APP_UID);
    // Every image is tried, so one run reports them all; any failure fails the run.
    for (const image of selected) {
      try {
        await image.start(image, { nats, redis, credentials });
      } catch (error) {
        failed.add(image.key);
        process.stderr.write(
          `[images:verify] ${imageName(image)}: ${error instanceof Error ? error.message : String(error)}\n`,
        );
      }
    }
  } finally {
    await Promise.all([nats.stop(), redis.stop()]);
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(
    `\nImages built from deploy/docker/Dockerfile (base: the ${base} stand-in, Node ${nodeVersion}):\n${sizeTable(base, selected, failed)}\n`,
  );
  if (failed.size > 0) throw new Error(`not ready: ${[...failed].join(', ')}`);
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(
      `[images:verify] failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
