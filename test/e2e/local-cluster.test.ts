import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort } from '@switchboard/devcluster';
import { makeAudioFixtures } from '../support/audio.js';
import { repoRoot } from '../support/gateway.js';
import { pngSize } from '../support/png.js';
import { descendants, isRunning as alive } from '../support/processes.js';
import { startTestSite } from '../support/test-site.js';

test(
  'the runner starts NATS, Redis, the workers and the gateway, serves the API, and Ctrl-C leaves nothing behind',
  { timeout: 240_000 },
  async () => {
    const port = await freePort();
    const site = await startTestSite();
    const stateDir = mkdtempSync(join(tmpdir(), 'sb-e2e-'));
    const runner = spawn(process.execPath, [join(repoRoot, 'libs/devcluster/dist/main.js')], {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH ?? '',
        SWITCHBOARD_STATE_DIR: stateDir,
        GATEWAY_PORT: String(port),
        LOG_LEVEL: 'warn',
        ADMIN_TOKEN: 'e2e-admin-token-0123456789',
        BROWSER_ALLOWED_HOSTS: site.host,
        // The avatar back-end against the local fake of the D-ID Talks API, as README documents.
        SWITCHBOARD_FAKE_AVATAR: '1',
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
    const listed = ((await models.json()) as { data: { capability: string; status: string }[] }).data;
    for (const capability of ['llm', 'whisper', 'diffusion', 'animation']) {
      assert.ok(
        listed.some((m) => m.capability === capability && m.status === 'ready'),
        `the runner built and loaded a ${capability} development model: ${JSON.stringify(listed)}`,
      );
    }

    // A transcription end to end: the upload streamed through the gateway, ffmpeg, the tiny Whisper.
    const audio = await makeAudioFixtures(5);
    const form = new FormData();
    form.append('file', new Blob([audio.long]), 'speech.wav');
    form.append('format', 'srt');
    const srt = await fetch(`${base}/transcribe`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    assert.equal(srt.status, 200, await srt.clone().text());
    assert.equal(srt.headers.get('content-type'), 'application/x-subrip; charset=utf-8');
    assert.match(srt.headers.get('content-language') ?? '', /^[a-z]{2,3}$/);
    await audio.remove();

    // An image end to end: the tiny pipeline, the PNG in the shared local store, served back.
    const generated = await fetch(`${base}/generate-image`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'a lighthouse', width: 256, height: 128, steps: 4 }),
    });
    assert.equal(generated.status, 200, await generated.clone().text());
    const { url: imageUrl } = (await generated.json()) as { url: string };
    const png = await fetch(`${base}${imageUrl}`, { headers: { authorization: `Bearer ${key}` } });
    assert.deepEqual(pngSize(Buffer.from(await png.arrayBuffer())), { width: 256, height: 128 });

    // Video jobs of all three back-ends end to end: JetStream, the worker, ffmpeg, the store.
    const pro = await fetch(`${base}/admin/api/keys`, {
      method: 'POST',
      headers: { authorization: 'Bearer e2e-admin-token-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'e2e-pro', tier: 'enterprise' }),
    });
    const proAuth = {
      authorization: `Bearer ${((await pro.json()) as { key: string }).key}`,
      'content-type': 'application/json',
    };
    const face = `data:image/png;base64,${Buffer.from(await (await fetch(`${base}${imageUrl}`, { headers: { authorization: `Bearer ${key}` } })).arrayBuffer()).toString('base64')}`;
    const speech = await makeAudioFixtures(2);
    const voice = `data:audio/wav;base64,${Buffer.from(speech.long).toString('base64')}`;
    await speech.remove();
    const jobs: string[] = [];
    for (const body of [
      { backend: 'video-diffusion', image: face, fps: 8, duration_s: 1 },
      { backend: 'portrait', image: face, audio: voice, fps: 10, duration_s: 1 },
      { backend: 'avatar', image: face, audio: voice, duration_s: 1 },
    ]) {
      const res = await fetch(`${base}/animate`, {
        method: 'POST',
        headers: proAuth,
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 202, await res.clone().text());
      jobs.push(((await res.json()) as { job_id: string }).job_id);
    }
    for (const jobId of jobs) {
      let job: { status: string; backend: string; result: { url: string } | null; error: unknown };
      const until = Date.now() + 60_000;
      do {
        await new Promise((r) => setTimeout(r, 200));
        job = (await (await fetch(`${base}/animate/${jobId}`, { headers: proAuth })).json()) as typeof job;
      } while (!['succeeded', 'failed', 'canceled'].includes(job.status) && Date.now() < until);
      assert.equal(job.status, 'succeeded', `${job.backend}: ${JSON.stringify(job)}`);
      const mp4 = await fetch(`${base}${job.result!.url}`, { headers: proAuth });
      assert.equal(mp4.headers.get('content-type'), 'video/mp4');
    }

    // A browser session end to end: Chromium, the guard, the shared local file store.
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const session = await fetch(`${base}/api/browser/session/create`, {
      method: 'POST',
      headers: auth,
      body: '{}',
    });
    assert.equal(session.status, 201, await session.clone().text());
    const { session_id: id } = (await session.json()) as { session_id: string };
    const nav = await fetch(`${base}/api/browser/session/${id}/navigate`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: `${site.origin}/form` }),
    });
    assert.equal(nav.status, 200, await nav.clone().text());
    const shot = await fetch(`${base}/api/browser/session/${id}/capture`, { method: 'POST', headers: auth });
    const { url: shotUrl } = (await shot.json()) as { url: string };
    const image = await fetch(`${base}${shotUrl}`, { headers: auth });
    assert.equal(image.status, 200);
    assert.deepEqual(pngSize(Buffer.from(await image.arrayBuffer())), { width: 1280, height: 720 });
    const closed = await fetch(`${base}/api/browser/session/${id}/close`, { method: 'POST', headers: auth });
    assert.equal(closed.status, 200);

    runner.kill('SIGINT');
    const [code] = (await once(runner, 'exit')) as [number | null];
    assert.equal(code, 0, output.slice(-2000));
    // Chromium's helpers exit a moment after their browser process; give them that moment.
    for (let waited = 0; waited < 5000 && children.some(alive); waited += 100) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const left = children.filter(alive);
    assert.deepEqual(left, [], 'no child process outlives the runner');
    assert.equal(
      (await fetch(`${base}/healthz`).catch(() => null))?.status,
      undefined,
      'the gateway port is closed',
    );
    rmSync(stateDir, { recursive: true, force: true });
    await site.stop();
  },
);
