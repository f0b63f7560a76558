#!/usr/bin/env node
// Removes from a deployed service folder (`pnpm deploy --prod` output) what the service never loads
// on this machine, so images do not carry it:
// - onnxruntime-node's prebuilt binaries for other platforms and architectures (its package holds
//   darwin, win32 and linux, x64 and arm64; only this process's platform/arch is ever loaded), and
// - onnxruntime-web, a dependency of @huggingface/transformers whose Node build has the web runtime
//   inlined and loads onnxruntime-node for inference: nothing requires the package at run time.
// The image build runs it on /out for the platform it builds; the bundle tests run it on their
// deployed folder before starting the service from it, so a pruned folder is proven to run.
// Plain Node, no dependencies. Usage: node prune-bundle.mjs <deployed folder>
import { existsSync, lstatSync, readdirSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Packages in pnpm's virtual store that no deployed service loads (see above). */
const unusedPackages = ['onnxruntime-web'];

function sizeOf(path) {
  const stat = lstatSync(path);
  if (!stat.isDirectory()) return stat.size;
  let total = 0;
  for (const entry of readdirSync(path)) total += sizeOf(join(path, entry));
  return total;
}

function remove(path, removed) {
  removed.push({ path, bytes: sizeOf(path) });
  rmSync(path, { recursive: true, force: true });
}

/** Every onnxruntime-node package folder in the virtual store (one per version). */
function onnxruntimeNodeFolders(store) {
  return readdirSync(store)
    .filter((entry) => entry.startsWith('onnxruntime-node@'))
    .map((entry) => join(store, entry, 'node_modules', 'onnxruntime-node'))
    .filter((folder) => existsSync(join(folder, 'bin')));
}

/** bin/napi-v<N>/<platform>/<arch> folders but this machine's own. */
function otherPlatformBinaries(folder) {
  const found = [];
  const bin = join(folder, 'bin');
  for (const napi of readdirSync(bin)) {
    for (const platform of readdirSync(join(bin, napi))) {
      if (platform !== process.platform) found.push(join(bin, napi, platform));
      else {
        for (const arch of readdirSync(join(bin, napi, platform))) {
          if (arch !== process.arch) found.push(join(bin, napi, platform, arch));
        }
      }
    }
  }
  return found;
}

/** Symlinks under `dir` (node_modules trees) whose target is gone: the links to what was removed. */
function danglingLinks(dir) {
  const found = [];
  const walk = (path) => {
    for (const entry of readdirSync(path)) {
      const full = join(path, entry);
      const stat = lstatSync(full);
      if (stat.isSymbolicLink()) {
        if (!existsSync(full)) found.push(`${full} -> ${readlinkSync(full)}`);
      } else if (stat.isDirectory()) walk(full);
    }
  };
  walk(dir);
  return found;
}

function prune(out) {
  const nodeModules = join(out, 'node_modules');
  if (!existsSync(join(out, 'package.json')) || !statSync(nodeModules).isDirectory()) {
    throw new Error(`${out} is not a deployed folder (no package.json and node_modules)`);
  }
  const store = join(nodeModules, '.pnpm');
  const removed = [];
  const linksBefore = existsSync(store) ? danglingLinks(nodeModules) : [];
  if (existsSync(store)) {
    for (const folder of onnxruntimeNodeFolders(store)) {
      for (const path of otherPlatformBinaries(folder)) remove(path, removed);
      const own = readdirSync(join(folder, 'bin')).map((napi) =>
        join(folder, 'bin', napi, process.platform, process.arch),
      );
      if (!own.some((path) => existsSync(path))) {
        throw new Error(`${folder} has no binary for ${process.platform}/${process.arch}`);
      }
    }
    for (const entry of readdirSync(store)) {
      if (unusedPackages.some((name) => entry.startsWith(`${name}@`))) remove(join(store, entry), removed);
    }
    // The links that pointed at the removed packages (a dependant's node_modules/<name>), and only
    // those: a link that was already broken is not this script's to hide.
    for (const link of danglingLinks(nodeModules)) {
      if (linksBefore.includes(link)) continue;
      const path = link.slice(0, link.indexOf(' -> '));
      rmSync(path);
      removed.push({ path, bytes: 0 });
    }
  }
  const total = removed.reduce((sum, r) => sum + r.bytes, 0);
  for (const { path, bytes } of removed) {
    process.stdout.write(`pruned ${path.slice(out.length + 1)} (${(bytes / 1e6).toFixed(1)} MB)\n`);
  }
  process.stdout.write(`pruned ${removed.length} paths, ${(total / 1e6).toFixed(1)} MB, from ${out}\n`);
}

const [target] = process.argv.slice(2);
if (!target) {
  process.stderr.write('usage: node prune-bundle.mjs <deployed folder>\n');
  process.exit(2);
}
prune(resolve(target));
