import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { processMemoryBytes, processTree, readProcessTable, treeMemoryBytes } from './process-memory.js';

test('processTree: the root and every descendant, nothing else', () => {
  const table = new Map([
    [10, 1],
    [11, 10],
    [12, 10],
    [13, 12],
    [20, 1],
    [21, 20],
  ]);
  assert.deepEqual(processTree(10, table).sort(), [10, 11, 12, 13]);
  assert.deepEqual(processTree(99, table), [], 'a process that is gone has no tree');
});

test('reads this process and a child holding 64 MB from /proc', async () => {
  const child = spawn(
    process.execPath,
    [
      '-e',
      "const b = Buffer.alloc(64 * 1048576, 1); process.stdout.write('ready'); setInterval(() => b[0]++, 1000);",
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  try {
    await once(child.stdout, 'data');
    const table = await readProcessTable();
    assert.equal(table.get(process.pid), process.ppid);
    assert.equal(table.get(child.pid!), process.pid);
    assert.ok(processTree(process.pid, table).includes(child.pid!));
    const own = await processMemoryBytes(child.pid!);
    assert.ok(own > 64 * 1048576, `the child's buffer is counted (${own} bytes)`);
    assert.ok((await treeMemoryBytes(process.pid, table)) >= own);
  } finally {
    child.kill('SIGKILL');
  }
  assert.equal(await processMemoryBytes(2 ** 22 + 1), 0, 'no such process');
});
