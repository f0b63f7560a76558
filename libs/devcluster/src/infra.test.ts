import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { canConnect, freePort } from './ports.js';
import { startNats, startRedis } from './infra.js';
import { firstBytes } from './ports.js';

test('freePort returns a bindable port below the ephemeral range, where connections take theirs', async () => {
  const [ephemeralStart] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
  const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
  for (const port of ports) {
    assert.ok(port >= 20_000 && port < Number(ephemeralStart), `${port}`);
    assert.equal(await canConnect(port), false);
  }
  assert.ok(new Set(ports).size > 1, 'not always the same port');
});

test('startNats serves the NATS protocol with JetStream, and stop removes its temp store', async () => {
  const nats = await startNats();
  try {
    assert.match(nats.url, /^nats:\/\/127\.0\.0\.1:\d+$/);
    const info = await firstBytes(nats.port, null);
    assert.ok(info?.startsWith('INFO '));
    assert.match(info ?? '', /"jetstream":true/);
    assert.match(info ?? '', /"auth_required":true/);
    assert.ok(nats.process.recentOutput().includes('Server is ready'));
  } finally {
    await nats.stop();
  }
  assert.equal(await canConnect(nats.port), false);
  const storeDir = /-sd (\S+)/.exec(nats.process.child.spawnargs.join(' '))?.[1];
  assert.ok(storeDir);
  assert.equal(existsSync(storeDir), false);
});

test('two servers started together get different ports', async () => {
  const [a, b] = await Promise.all([startNats(), startNats()]);
  try {
    assert.notEqual(a.port, b.port);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
});

test('startRedis answers PING only after AUTH; kill, pause and restart on the same port', async () => {
  const redis = await startRedis();
  const { user, password } = redis.credentials('gateway');
  const authedPing = `AUTH ${user} ${password}\r\nPING\r\n`;
  try {
    assert.match(redis.url, /^redis:\/\/127\.0\.0\.1:\d+$/);
    assert.match((await firstBytes(redis.port, 'PING\r\n')) ?? '', /^-NOAUTH/);
    assert.match((await firstBytes(redis.port, 'AUTH gateway wrong\r\n')) ?? '', /^-WRONGPASS/);
    assert.match((await firstBytes(redis.port, authedPing)) ?? '', /^\+OK\r\n/);

    redis.pause();
    assert.equal(
      await firstBytes(redis.port, 'PING\r\n', '127.0.0.1', 300),
      null,
      'a paused server answers nothing',
    );
    redis.resume();
    assert.match((await firstBytes(redis.port, authedPing)) ?? '', /^\+OK\r\n/);

    await redis.kill();
    assert.equal(await canConnect(redis.port), false);
    await redis.restart();
    assert.match((await firstBytes(redis.port, authedPing)) ?? '', /^\+OK\r\n/, 'same users after a restart');
  } finally {
    await redis.stop();
  }
  assert.equal(await canConnect(redis.port), false);
});

test('an explicit port that is taken fails with the server output', async () => {
  const redis = await startRedis();
  try {
    await assert.rejects(startRedis({ port: redis.port }), /redis-server exited during start-up/);
  } finally {
    await redis.stop();
  }
});

/** Runs a child node process that starts Redis, prints its port, then ends as `how` says. */
async function orphanCheck(how: 'exit' | 'SIGTERM' | 'SIGKILL'): Promise<void> {
  const infra = fileURLToPath(new URL('./infra.js', import.meta.url));
  const script = `
    const { startRedis } = await import(${JSON.stringify(infra)});
    const r = await startRedis();
    process.stdout.write(r.port + '\\n');
    // Stay alive until the parent has seen the server; then exit without calling stop().
    process.stdin.once('data', () => process.exit(0));
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    child.once('exit', (code) => reject(new Error(`child exited early (${code})`)));
  });
  assert.equal(await canConnect(port), true);
  if (how === 'exit') child.stdin.write('go\n');
  else child.kill(how);
  await new Promise((resolve) => child.once('exit', resolve).exitCode !== null && resolve(undefined));
  const deadline = Date.now() + 3000;
  while ((await canConnect(port)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.equal(await canConnect(port), false, `redis on ${port} outlived its parent (${how})`);
}

test('servers do not outlive the process that started them', async (t) => {
  await t.test('normal exit', () => orphanCheck('exit'));
  await t.test('SIGTERM', () => orphanCheck('SIGTERM'));
  await t.test('SIGKILL', () => orphanCheck('SIGKILL'));
});
