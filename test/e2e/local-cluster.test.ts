import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort } from '@switchboard/devcluster';
import { repoRoot } from '../support/gateway.js';

/** Every live process whose parent chain leads to `ancestor`. */
function descendants(ancestor: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // exited while we looked
    }
  }
  const found: number[] = [];
  for (const [pid] of parents) {
    for (let p = parents.get(pid); p !== undefined && p > 1; p = parents.get(p)) {
      if (p === ancestor) {
        found.push(pid);
        break;
      }
    }
  }
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test(
  'the runner starts NATS, Redis and the gateway, serves the API, and Ctrl-C leaves nothing behind',
  { timeout: 120_000 },
  async () => {
    const port = await freePort();
    const stateDir = mkdtempSync(join(tmpdir(), 'sb-e2e-'));
    const runner = spawn(process.execPath, [join(repoRoot, 'libs/devcluster/dist/main.js')], {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH ?? '',
        SWITCHBOARD_STATE_DIR: stateDir,
        GATEWAY_PORT: String(port),
        LOG_LEVEL: 'warn',
        ADMIN_TOKEN: 'e2e-admin-token-0123456789',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    runner.stdout.on('data', (c: Buffer) => (output += c.toString()));
    runner.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const deadline = Date.now() + 90_000;
    while (!output.includes('[switchboard] ready:')) {
      assert.equal(runner.exitCode, null, `runner exited:\n${output}`);
      assert.ok(Date.now() < deadline, `runner not ready:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(output, new RegExp(`ready: http://127\\.0\\.0\\.1:${port}`));
    assert.match(output, /admin token: e2e-admin-token-0123456789/);
    const children = descendants(runner.pid!);
    assert.ok(children.length >= 3, `nats, redis and the gateway run as children: ${children.length}`);

    const base = `http://127.0.0.1:${port}`;
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    const created = await fetch(`${base}/admin/api/keys`, {
      method: 'POST',
      headers: { authorization: 'Bearer e2e-admin-token-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'e2e', tier: 'basic' }),
    });
    assert.equal(created.status, 201);
    const { key } = (await created.json()) as { key: string };
    const models = await fetch(`${base}/models`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(models.status, 200);

    runner.kill('SIGINT');
    const [code] = (await once(runner, 'exit')) as [number | null];
    assert.equal(code, 0, output.slice(-2000));
    await new Promise((r) => setTimeout(r, 200));
    const left = children.filter(alive);
    assert.deepEqual(left, [], 'no child process outlives the runner');
    assert.equal(
      (await fetch(`${base}/healthz`).catch(() => null))?.status,
      undefined,
      'the gateway port is closed',
    );
    rmSync(stateDir, { recursive: true, force: true });
  },
);
