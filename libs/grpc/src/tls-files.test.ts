import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type TlsPems, watchTlsFiles } from './tls-files.js';

const dir = mkdtempSync(join(tmpdir(), 'switchboard-tls-files-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Replaces a file at once, as the kubelet swaps a mounted Secret's files. */
function put(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(`${path}.new`, text);
  renameSync(`${path}.new`, path);
  return path;
}

test('reads the files at once, and again when they change, telling listeners only of changes', async () => {
  const paths = {
    certFile: put('tls.crt', 'cert 1'),
    keyFile: put('tls.key', 'key 1'),
    caFile: put('ca.crt', 'ca'),
  };
  const watch = watchTlsFiles(paths, 20);
  const seen: TlsPems[] = [];
  watch.onChange((pems) => seen.push(pems));
  assert.deepEqual(
    [watch.current().cert?.toString(), watch.current().key?.toString(), watch.current().ca?.toString()],
    ['cert 1', 'key 1', 'ca'],
  );
  await sleep(100);
  assert.equal(seen.length, 0, 'nothing changed');
  put('tls.crt', 'cert 2');
  put('tls.key', 'key 2');
  for (let i = 0; i < 50 && watch.current().key?.toString() !== 'key 2'; i++) await sleep(20);
  assert.equal(watch.current().cert?.toString(), 'cert 2');
  assert.equal(watch.current().key?.toString(), 'key 2');
  assert.ok(seen.length >= 1 && seen.at(-1)?.key?.toString() === 'key 2');
  watch.close();
});

test('a reading that fails keeps the last contents; a file missing at the start throws', async () => {
  const certFile = put('gone.crt', 'cert');
  const watch = watchTlsFiles({ certFile }, 20);
  rmSync(certFile);
  await sleep(100);
  assert.equal(watch.current().cert?.toString(), 'cert');
  watch.close();
  assert.throws(() => watchTlsFiles({ certFile }), /ENOENT/);
});
