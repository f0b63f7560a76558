import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { createSwitchboardClient, type Schema } from '@switchboard/client';
import { freePort } from '@switchboard/devcluster';
import { makeAudioFixtures } from '../support/audio.js';
import { repoRoot } from '../support/gateway.js';
import { pngSize } from '../support/png.js';
import { descendants, isRunning as alive, spawnNode } from '../support/processes.js';
import { startTestSite } from '../support/test-site.js';
import { localClusterEnv } from '../support/local-cluster-env.js';

/** The data of a typed-client call that must answer `status`; otherwise fails showing its error body. */
function answered<T>(call: { data?: T; error?: unknown; response: Response }, status: number): T {
  assert.equal(call.response.status, status, JSON.stringify(call.error));
  assert.ok(call.data !== undefined, `${call.response.url}: a body`);
  return call.data;
}

test(
  'the runner starts NATS, Redis, the workers and the gateway, serves the API, and Ctrl-C leaves nothing behind',
  { timeout: 240_000 },
  async (t) => {
    // The site first: a port freePort found could otherwise be handed to the site a moment later.
    const site = await startTestSite();
    const port = await freePort();
    const stateDir = mkdtempSync(join(tmpdir(), 'sb-e2e-'));
    const cluster = spawnNode('local cluster', join(repoRoot, 'libs/devcluster/dist/main.js'), {
      cwd: repoRoot,
      outputLimit: Infinity,
      env: localClusterEnv(stateDir, port, {
        ADMIN_TOKEN: 'e2e-admin-token-0123456789',
        BROWSER_ALLOWED_HOSTS: site.host,
        // The avatar back-end against the local fake of the D-ID Talks API, as README documents.
        SWITCHBOARD_FAKE_AVATAR: '1',
      }),
    });
    const runner = cluster.child;
    // A failed check must not leave the cluster running (and the test process waiting on it).
    t.after(async () => {
      if (runner.exitCode === null && runner.signalCode === null) runner.kill('SIGINT');
      await site.stop();
      rmSync(stateDir, { recursive: true, force: true });
    });
    const output = () => cluster.output();
    const deadline = Date.now() + 90_000;
    while (!output().includes('[switchboard] ready:')) {
      assert.equal(runner.exitCode, null, `runner exited:\n${output()}`);
      assert.ok(Date.now() < deadline, `runner not ready:\n${output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(output(), new RegExp(`ready: http://127\\.0\\.0\\.1:${port}`));
    assert.match(output(), /admin token: e2e-admin-token-0123456789/);
    const children = descendants(runner.pid!);
    assert.ok(children.length >= 3, `nats, redis and the gateway run as children: ${children.length}`);

    const base = `http://127.0.0.1:${port}`;
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    // JSON calls go through the typed client (libs/client), as the README shows; uploads and
    // downloads stay plain fetch calls with the same bearer header.
    const admin = createSwitchboardClient({ baseUrl: base, adminToken: 'e2e-admin-token-0123456789' });
    const { key } = answered(
      await admin.POST('/admin/api/keys', { body: { name: 'e2e', tier: 'basic' } }),
      201,
    );
    const api = createSwitchboardClient({ baseUrl: base, apiKey: key });
    const listed = answered(await api.GET('/models'), 200).data;
    for (const capability of ['llm', 'whisper', 'diffusion', 'animation']) {
      assert.ok(
        listed.some((m) => m.capability === capability && m.status === 'ready'),
        `the runner built and loaded a ${capability} development model: ${JSON.stringify(listed)}`,
      );
    }
    // /models says what each model is: the runner's are random-weight development models (the
    // avatar back-end is a vendor's service, here its local fake, not a model of ours).
    const ours = listed.filter((m) => !m.id.startsWith('avatar/'));
    assert.ok(
      ours.every((m) => m.development),
      JSON.stringify(listed),
    );
    assert.ok(
      listed.some((m) => m.id.startsWith('avatar/') && !m.development),
      JSON.stringify(listed),
    );
    const video = listed.find((m) => m.id.startsWith('video-diffusion/') && m.status === 'ready');
    assert.equal(video?.dtype, 'fp32', JSON.stringify(video));
    assert.ok((video?.native_width ?? 0) > 0 && (video?.native_height ?? 0) > 0, JSON.stringify(video));

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
    const { url: imageUrl } = answered(
      await api.POST('/generate-image', {
        body: { prompt: 'a lighthouse', width: 256, height: 128, steps: 4 },
      }),
      200,
    );
    const png = await fetch(`${base}${imageUrl}`, { headers: { authorization: `Bearer ${key}` } });
    assert.deepEqual(pngSize(Buffer.from(await png.arrayBuffer())), { width: 256, height: 128 });

    // Video jobs of all three back-ends end to end: JetStream, the worker, ffmpeg, the store.
    const proKey = answered(
      await admin.POST('/admin/api/keys', { body: { name: 'e2e-pro', tier: 'enterprise' } }),
      201,
    ).key;
    const pro = createSwitchboardClient({ baseUrl: base, apiKey: proKey });
    const face = `data:image/png;base64,${Buffer.from(await (await fetch(`${base}${imageUrl}`, { headers: { authorization: `Bearer ${key}` } })).arrayBuffer()).toString('base64')}`;
    const speech = await makeAudioFixtures(2);
    const voice = `data:audio/wav;base64,${Buffer.from(speech.long).toString('base64')}`;
    await speech.remove();
    const jobs: string[] = [];
    const requests: Schema<'AnimateRequest'>[] = [
      { backend: 'video-diffusion', image: face, fps: 8, duration_s: 1 },
      { backend: 'portrait', image: face, audio: voice, fps: 10, duration_s: 1 },
      { backend: 'avatar', image: face, audio: voice, duration_s: 1 },
    ];
    for (const body of requests) {
      jobs.push(answered(await pro.POST('/animate', { body }), 202).job_id);
    }
    for (const jobId of jobs) {
      let job: Schema<'Job'>;
      const until = Date.now() + 60_000;
      do {
        await new Promise((r) => setTimeout(r, 200));
        job = answered(await pro.GET('/animate/{job_id}', { params: { path: { job_id: jobId } } }), 200);
      } while (!['succeeded', 'failed', 'canceled'].includes(job.status) && Date.now() < until);
      assert.equal(job.status, 'succeeded', `${job.backend}: ${JSON.stringify(job)}`);
      const mp4 = await fetch(`${base}${job.result!.url}`, {
        headers: { authorization: `Bearer ${proKey}` },
      });
      assert.equal(mp4.headers.get('content-type'), 'video/mp4');
    }

    await exerciseOpenAiApi(base, key, proKey, face);

    // A browser session end to end: Chromium, the guard, the shared local file store.
    const { session_id: id } = answered(await api.POST('/api/browser/session/create', { body: {} }), 201);
    const session = { params: { path: { id } } };
    answered(
      await api.POST('/api/browser/session/{id}/navigate', {
        ...session,
        body: { url: `${site.origin}/form` },
      }),
      200,
    );
    const { url: shotUrl } = answered(await api.POST('/api/browser/session/{id}/capture', session), 200);
    const image = await fetch(`${base}${shotUrl}`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(image.status, 200);
    assert.deepEqual(pngSize(Buffer.from(await image.arrayBuffer())), { width: 1280, height: 720 });
    assert.equal(answered(await api.POST('/api/browser/session/{id}/close', session), 200).status, 'closed');

    runner.kill('SIGINT');
    const [code] = await cluster.exited;
    assert.equal(code, 0, output().slice(-2000));
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
  },
);

/**
 * The OpenAI-compatible API (/v1) of the runner's cluster through the official client, as the
 * README shows it: models, a streamed chat on the development Llama's chat template, a
 * transcription, an image and a video job.
 */
async function exerciseOpenAiApi(base: string, key: string, proKey: string, face: string): Promise<void> {
  const client = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
  const models = (await client.models.list()).data as (OpenAI.Model & { capability: string })[];
  const modelOf = (capability: string) => {
    const model = models.find((m) => m.capability === capability);
    assert.ok(model, `/v1/models lists a ${capability} model: ${JSON.stringify(models)}`);
    return model.id;
  };

  const stream = await client.chat.completions.create({
    model: modelOf('llm'),
    messages: [{ role: 'user', content: 'Tell me a story.' }],
    max_tokens: 8,
    stream: true,
  });
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.equal(chunks[0]?.choices[0]?.delta.role, 'assistant');
  assert.ok(
    ['length', 'stop'].includes(chunks.at(-1)?.choices[0]?.finish_reason ?? ''),
    JSON.stringify(chunks),
  );

  const audio = await makeAudioFixtures(3);
  const vtt = await client.audio.transcriptions.create({
    file: await toFile(audio.long, 'speech.wav'),
    model: modelOf('whisper'),
    response_format: 'vtt',
  });
  await audio.remove();
  assert.match(vtt, /^WEBVTT/);

  const image = await client.images.generate({
    model: modelOf('diffusion'),
    prompt: 'a lighthouse',
    size: '256x128',
    response_format: 'b64_json',
  });
  assert.deepEqual(pngSize(Buffer.from(image.data![0]!.b64_json!, 'base64')), { width: 256, height: 128 });

  const pro = new OpenAI({ apiKey: proKey, baseURL: `${base}/v1`, maxRetries: 0 });
  const created = await pro.videos.create({
    input_reference: { image_url: face },
    prompt: 'ignored',
    seconds: '1',
    size: '64x64',
  } as unknown as OpenAI.VideoCreateParams);
  let video = created;
  for (
    const until = Date.now() + 60_000;
    !['completed', 'failed'].includes(video.status) && Date.now() < until;
  ) {
    await new Promise((r) => setTimeout(r, 200));
    video = await pro.videos.retrieve(created.id);
  }
  assert.equal(video.status, 'completed', JSON.stringify(video));
  const mp4 = await pro.videos.downloadContent(created.id);
  assert.equal(mp4.headers.get('content-type'), 'video/mp4');
}
