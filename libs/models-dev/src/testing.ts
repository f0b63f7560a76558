// Test support shared by the tiny-model builders' tests: temporary folders, what a written model
// folder holds, the "written files equal the built bytes, and the CLI writes the same" check, and
// the feeds for driving decoder sessions directly.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Tensor } from 'onnxruntime-node';

export type Feeds = Record<string, Tensor>;

const cli = fileURLToPath(new URL('./cli.js', import.meta.url));

export async function withTmp(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'models-dev-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Every file below `dir`, as sorted paths relative to it. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

/** Each built file is on disk under `dir` with exactly the built bytes. */
export async function assertWritten(dir: string, files: ReadonlyMap<string, Uint8Array>): Promise<void> {
  for (const [path, bytes] of files) assert.ok((await readFile(join(dir, path))).equals(bytes), path);
}

/**
 * The CLI's `command <dir> --seed <seed>` writes the same bytes as the builder did, and says it
 * wrote a development model of `kind`.
 */
export async function assertCliWrites(
  command: string,
  kind: string,
  seed: number,
  dir: string,
  files: ReadonlyMap<string, Uint8Array>,
): Promise<void> {
  const { stdout } = await promisify(execFile)(process.execPath, [cli, command, dir, '--seed', String(seed)]);
  assert.match(stdout, new RegExp(`tiny random-weight development model \\(${kind}`));
  await assertWritten(dir, files);
}

/** The CLI refuses `args` with its usage line. */
export async function assertCliUsage(...args: string[]): Promise<void> {
  await assert.rejects(promisify(execFile)(process.execPath, [cli, ...args]), /usage: models-dev/);
}

export const int64 = (rows: readonly (readonly number[])[]): Tensor =>
  new Tensor(
    'int64',
    BigInt64Array.from(rows.flat(), (v) => BigInt(v)),
    [rows.length, rows[0]?.length ?? 0],
  );

/** The next step's past: each `present.*` output fed back as `past_key_values.*`. */
export function pastFrom(outputs: Feeds): Feeds {
  const feeds: Feeds = {};
  for (const [name, t] of Object.entries(outputs)) {
    if (name.startsWith('present.')) feeds[name.replace('present.', 'past_key_values.')] = t;
  }
  return feeds;
}
