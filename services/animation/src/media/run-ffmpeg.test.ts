// What a tenant's media reaches when it takes over ffmpeg or ffprobe (both parse untrusted
// files): the processes' own environment, read here from /proc while they run, with the worker's
// secrets in process.env as the worker has them.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { defaultFfmpegPaths, startProcess } from './run-ffmpeg.js';

const secrets = {
  CLUSTER_SECRET: 'cluster-secret-5d1f0c9a7e3b42d68a0f',
  AVATAR_API_KEY: 'avatar-live-key-91c4e07b2d5f3a86',
  S3_SECRET_KEY: 's3-secret-key-3e8b6f1d0a9c7254',
  NATS_URL: 'nats://animation:nats-password-b07d@nats:4222',
  ADMIN_TOKEN: 'admin-token-62f0d9c4a1e8b357',
};
const saved: Record<string, string | undefined> = {};

before(() => {
  for (const [name, value] of Object.entries(secrets)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
after(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** Starts `binary` reading raw audio from a stdin pipe kept open, and returns its environment. */
async function environWhileRunning(binary: string, args: string[]): Promise<Record<string, string>> {
  const running = startProcess(binary, args);
  try {
    await new Promise((resolve) => running.child.once('spawn', resolve));
    const text = await readFile(`/proc/${running.child.pid}/environ`, 'utf8');
    return Object.fromEntries(
      text
        .split('\0')
        .filter(Boolean)
        .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
    );
  } finally {
    running.child.kill('SIGKILL');
    await running.done.catch(() => undefined);
  }
}

for (const [name, binary, args] of [
  [
    'ffmpeg',
    defaultFfmpegPaths.ffmpeg,
    ['-f', 's16le', '-ar', '8000', '-ac', '1', '-i', 'pipe:0', '-f', 'null', '-'],
  ],
  ['ffprobe', defaultFfmpegPaths.ffprobe, ['-v', 'error', '-f', 's16le', '-i', 'pipe:0']],
] as const) {
  test(`${name} gets PATH and the locale, never the worker's secrets`, async () => {
    const env = await environWhileRunning(binary, [...args]);
    assert.ok(env.PATH, `${name} still finds programs`);
    for (const [secret, value] of Object.entries(secrets)) {
      assert.equal(env[secret], undefined, `${name} got ${secret}`);
      assert.ok(!Object.values(env).some((v) => v.includes(value)), `${name} holds the value of ${secret}`);
    }
    assert.deepEqual(
      Object.keys(env).filter((n) => !['PATH', 'LANG', 'LC_ALL', 'TZ'].includes(n)),
      [],
      `${name} got more than the allow-list`,
    );
  });
}
