// Animation jobs through the gateway with real NATS/JetStream, a real object store, real ONNX
// Runtime and real ffmpeg: submitted with no worker running, finished when one starts, and the
// API's contract around them (validation, ownership, idempotency, limits, cancel, Range).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { bearer } from '../support/admin.js';
import {
  acceptedJobId,
  dataUrl,
  getJob,
  makeFixtures,
  probeMp4,
  probeResult,
  startAnimationStack,
  submit,
  waitForJob,
  type AnimationStack,
  type Fixtures,
  type JobView,
} from '../support/animation.js';
import { spawnGateway } from '../support/gateway.js';
import { peakRss } from '../support/processes.js';
import { errorOf } from '../support/stack.js';
import type { WorkerProcess } from '../support/worker.js';

const MB = 1024 * 1024;
const UPLOAD_LIMIT = 30 * MB;
const BIG_UPLOAD = 120 * MB;
let s: AnimationStack;
let fx: Fixtures;
let nc: NatsConnection;
let worker: WorkerProcess;
const events: { subject: string; job_id: string }[] = [];

before(async () => {
  [s, fx] = await Promise.all([
    // A smaller upload limit keeps the streaming test's files small on a 2-core machine.
    startAnimationStack({
      gateways: 2,
      gatewayEnv: { TIER_POLICIES: JSON.stringify({ professional: { upload_limit_bytes: UPLOAD_LIMIT } }) },
    }),
    makeFixtures(),
  ]);
  nc = await connect(s.stack.nats.connectOptions('operator'));
  const sub = nc.subscribe('switchboard.events.animate.job.>');
  void (async () => {
    for await (const msg of sub) {
      const body = JSON.parse(new TextDecoder().decode(msg.data)) as { job_id: string };
      events.push({ subject: msg.subject, job_id: body.job_id });
    }
  })();
});

after(async () => {
  await nc?.close();
  await s?.stop();
  await fx?.remove();
});

const image = () => dataUrl('image/png', fx.png);

async function listJobs(key: string): Promise<JobView[]> {
  const res = await fetch(`${s.gateway.url}/animate?limit=100`, { headers: bearer(key) });
  return ((await res.json()) as { data: JobView[] }).data;
}

async function video(key: string, job: JobView, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${s.gateway.url}${job.result!.url}`, { headers: { ...bearer(key), ...headers } });
}

test('jobs are accepted and listed with no worker running, then finished when one starts', async () => {
  const { key } = await s.key();
  const jobId = await acceptedJobId(
    await submit(s.gateway, key, {
      backend: 'video-diffusion',
      image: image(),
      fps: 8,
      duration_s: 1.5,
      seed: 7,
    }),
  );
  const list = (await (
    await fetch(`${s.stack.gateways[1]!.url}/animate`, { headers: bearer(key) })
  ).json()) as {
    data: JobView[];
    has_more: boolean;
  };
  assert.deepEqual(
    list.data.map((j) => [j.job_id, j.status]),
    [[jobId, 'queued']],
  );
  worker = await s.startWorker();
  const done = await waitForJob(s.gateway, key, jobId);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.equal(done.attempts, 1);
  assert.deepEqual(
    { fps: done.result!.fps, frames: done.result!.frames, w: done.result!.width, h: done.result!.height },
    { fps: 8, frames: 12, w: 64, h: 64 },
  );
  const res = await video(key, done);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'video/mp4');
  const probe = await probeMp4(Buffer.from(await res.arrayBuffer()));
  assert.deepEqual(probe, {
    codec: 'h264',
    pixFmt: 'yuv420p',
    width: 64,
    height: 64,
    fps: 8,
    frames: 12,
    audio: false,
  });
  // Each state's event once.
  const subjects = events.filter((e) => e.job_id === jobId).map((e) => e.subject.split('.').pop());
  assert.deepEqual(subjects, ['queued', 'running', 'succeeded']);
});

test('same seed and inputs give a byte-identical MP4; Range requests return the exact bytes', async () => {
  const { key } = await s.key();
  const body = { backend: 'video-diffusion', image: image(), fps: 6, duration_s: 1, seed: 42 };
  const [a, b] = [
    await acceptedJobId(await submit(s.gateway, key, body)),
    await acceptedJobId(await submit(s.gateway, key, body)),
  ];
  const [ja, jb] = [await waitForJob(s.gateway, key, a), await waitForJob(s.gateway, key, b)];
  const [va, vb] = [
    Buffer.from(await (await video(key, ja)).arrayBuffer()),
    Buffer.from(await (await video(key, jb)).arrayBuffer()),
  ];
  assert.ok(va.equals(vb), 'same seed → same bytes');
  const ranged = await video(key, ja, { range: 'bytes=10-99' });
  assert.equal(ranged.status, 206);
  assert.equal(ranged.headers.get('content-range'), `bytes 10-99/${va.length}`);
  assert.ok(Buffer.from(await ranged.arrayBuffer()).equals(va.subarray(10, 100)));
  const poster = await fetch(`${s.gateway.url}${ja.result!.poster_url}`, { headers: bearer(key) });
  assert.equal(poster.status, 200);
  assert.equal(poster.headers.get('content-type'), 'image/jpeg');
  // Another key sees neither the job nor its video.
  const other = await s.key();
  assert.equal((await fetch(`${s.gateway.url}/animate/${a}`, { headers: bearer(other.key) })).status, 404);
  assert.equal((await video(other.key, ja)).status, 404);
  assert.equal(
    (await errorOf(await fetch(`${s.gateway.url}/animate/${a}`, { headers: bearer(other.key) }))).code,
    'job_not_found',
  );
});

test('portrait from a multipart driving video keeps its sound; from audio too', async () => {
  const { key } = await s.key();
  const form = new FormData();
  form.set('backend', 'portrait');
  form.set('image', new Blob([new Uint8Array(fx.png)]), 'face.bin');
  form.set('driving_video', new Blob([new Uint8Array(fx.video)], { type: 'text/plain' }), 'drive.mp4');
  form.set('seed', '3');
  const res = await fetch(`${s.gateway.url}/animate`, { method: 'POST', headers: bearer(key), body: form });
  const fromVideo = await waitForJob(s.gateway, key, await acceptedJobId(res));
  assert.equal(fromVideo.status, 'succeeded', JSON.stringify(fromVideo.error));
  const probe = await probeResult(s.gateway, key, fromVideo);
  assert.deepEqual(
    { codec: probe.codec, fps: probe.fps, frames: probe.frames, audio: probe.audio, w: probe.width },
    { codec: 'h264', fps: 10, frames: 10, audio: true, w: 512 },
  );
  const fromAudio = await waitForJob(
    s.gateway,
    key,
    await acceptedJobId(
      await submit(s.gateway, key, {
        backend: 'portrait',
        image: image(),
        audio: dataUrl('audio/wav', fx.wav),
        fps: 5,
      }),
    ),
  );
  assert.equal(fromAudio.status, 'succeeded', JSON.stringify(fromAudio.error));
  const audioProbe = await probeResult(s.gateway, key, fromAudio);
  assert.deepEqual({ frames: audioProbe.frames, audio: audioProbe.audio }, { frames: 5, audio: true });
});

test('every field is validated with its param; media are checked by content', async () => {
  const { key } = await s.key();
  const cases: [Record<string, unknown>, string][] = [
    [{ image: image() }, 'backend'],
    [{ backend: 'cartoon', image: image() }, 'backend'],
    [{ backend: 'video-diffusion' }, 'image'],
    [{ backend: 'video-diffusion', image: 'https://example.com/a.png' }, 'image'],
    [{ backend: 'video-diffusion', image: dataUrl('image/png', fx.wav) }, 'image'],
    [{ backend: 'video-diffusion', image: image(), fps: 0 }, 'fps'],
    [{ backend: 'video-diffusion', image: image(), fps: 61 }, 'fps'],
    [{ backend: 'video-diffusion', image: image(), duration_s: 0.1 }, 'duration_s'],
    [{ backend: 'video-diffusion', image: image(), duration_s: 61 }, 'duration_s'],
    [{ backend: 'video-diffusion', image: image(), seed: 1.5 }, 'seed'],
    [{ backend: 'video-diffusion', image: image(), width: 100 }, 'width'],
    [{ backend: 'video-diffusion', image: image(), height: 32 }, 'height'],
    [{ backend: 'video-diffusion', image: image(), motion_bucket_id: 0 }, 'motion_bucket_id'],
    [{ backend: 'video-diffusion', image: image(), noise_aug_strength: 2 }, 'noise_aug_strength'],
    [{ backend: 'portrait', image: image() }, 'driving_video'],
    [{ backend: 'portrait', image: image(), audio: dataUrl('audio/wav', fx.png) }, 'audio'],
    [{ backend: 'portrait', image: image(), driving_video: dataUrl('video/mp4', fx.png) }, 'driving_video'],
    [{ backend: 'avatar', image: image() }, 'audio'],
    [{ backend: 'avatar', image: image(), text: 'x'.repeat(5001) }, 'text'],
    [{ backend: 'avatar', image: image(), text: 'hi', voice: 'no spaces please' }, 'voice'],
  ];
  for (const [body, param] of cases) {
    const res = await submit(s.gateway, key, body);
    assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)} → ${res.status}`);
    assert.equal((await errorOf(res)).param, param, JSON.stringify(body).slice(0, 80));
  }
  const idem = await submit(
    s.gateway,
    key,
    { backend: 'video-diffusion', image: image() },
    { 'idempotency-key': 'x'.repeat(256) },
  );
  assert.equal(idem.status, 400);
  const text = await fetch(`${s.gateway.url}/animate`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'text/plain' },
    body: 'hi',
  });
  assert.equal((await errorOf(text)).code, 'unsupported_media_type');
  const basic = await s.key('basic');
  assert.equal(
    (await errorOf(await submit(s.gateway, basic.key, { backend: 'video-diffusion', image: image() }))).code,
    'tier_required',
  );
});

test("another key's image is 404; a key's own generated image is accepted by reference", async () => {
  const owner = await s.key();
  const done = await waitForJob(
    s.gateway,
    owner.key,
    await acceptedJobId(
      await submit(s.gateway, owner.key, {
        backend: 'video-diffusion',
        image: image(),
        fps: 2,
        duration_s: 1,
      }),
    ),
  );
  const other = await s.key();
  const stolen = await submit(s.gateway, other.key, {
    backend: 'portrait',
    image: image(),
    driving_video: done.result!.url,
  });
  assert.equal(stolen.status, 404);
  const own = await submit(s.gateway, owner.key, {
    backend: 'portrait',
    image: image(),
    driving_video: done.result!.url,
    duration_s: 0.5,
  });
  assert.equal(own.status, 202);
  assert.equal((await waitForJob(s.gateway, owner.key, await acceptedJobId(own))).status, 'succeeded');
  const missingImage = await submit(s.gateway, owner.key, {
    backend: 'video-diffusion',
    image: '/api/images/img-nope.png',
  });
  assert.equal(missingImage.status, 404);
});

test('idempotency: same body → same job (also concurrently, across gateways), other body → 422', async () => {
  const { key } = await s.key('enterprise');
  const body = { backend: 'video-diffusion', image: image(), fps: 2, duration_s: 1, seed: 1 };
  const headers = { 'idempotency-key': 'order-1' };
  const responses = await Promise.all([
    submit(s.stack.gateways[0]!, key, body, headers),
    submit(s.stack.gateways[1]!, key, body, headers),
    submit(s.stack.gateways[0]!, key, { ...body }, headers),
  ]);
  const ids = new Set(await Promise.all(responses.map(acceptedJobId)));
  assert.equal(ids.size, 1);
  const reused = await submit(s.gateway, key, { ...body, seed: 2 }, headers);
  assert.equal(reused.status, 422);
  assert.equal((await errorOf(reused)).code, 'idempotency_key_reused');
  const list = (await (
    await fetch(`${s.gateway.url}/animate?limit=100`, { headers: bearer(key) })
  ).json()) as { data: JobView[] };
  assert.equal(list.data.length, 1);
});

test('cancel: queued at once, running within 2 s with no result, finished → 409', async () => {
  const { key } = await s.key();
  // A long job keeps the worker busy; the second waits in the queue.
  const long = await acceptedJobId(
    await submit(s.gateway, key, {
      backend: 'video-diffusion',
      image: image(),
      fps: 60,
      duration_s: 60,
      seed: 1,
    }),
  );
  await waitForJob(s.gateway, key, long, (j) => j.status === 'running' && j.progress > 0);
  const queued = await acceptedJobId(
    await submit(s.gateway, key, { backend: 'video-diffusion', image: image(), fps: 2, duration_s: 1 }),
  );
  const canceledQueued = await fetch(`${s.gateway.url}/animate/${queued}`, {
    method: 'DELETE',
    headers: bearer(key),
  });
  assert.equal(((await canceledQueued.json()) as JobView).status, 'canceled');
  const started = Date.now();
  const res = await fetch(`${s.gateway.url}/animate/${long}`, { method: 'DELETE', headers: bearer(key) });
  assert.equal(res.status, 200);
  assert.equal(((await res.json()) as JobView).status, 'canceled');
  // The worker lets go within 2 s: its running gauge drops.
  for (;;) {
    if ((await worker.metric('animation_jobs_running')) === 0) break;
    assert.ok(Date.now() - started < 2000, 'the running job stopped within 2 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const canceledJob = await getJob(s.gateway, key, long);
  assert.equal(canceledJob.result, null);
  const again = await fetch(`${s.gateway.url}/animate/${long}`, { method: 'DELETE', headers: bearer(key) });
  assert.equal(again.status, 409);
  assert.equal((await errorOf(again)).code, 'job_finished');
  const stored = await fetch(`${s.gateway.url}/api/videos/${long}.mp4`, { headers: bearer(key) });
  assert.equal(stored.status, 404);
});

test('the tier limit on queued + running jobs holds across two gateways', async () => {
  const { key } = await s.key();
  const long = { backend: 'video-diffusion', image: image(), fps: 60, duration_s: 60 };
  const results = await Promise.all([0, 1, 2, 3].map((i) => submit(s.stack.gateways[i % 2]!, key, long)));
  const admitted = results.filter((r) => r.status === 202);
  assert.equal(admitted.length, 2, results.map((r) => r.status).join(','));
  for (const r of results.filter((x) => x.status !== 202)) {
    assert.equal(r.status, 429);
    assert.equal((await errorOf(r)).code, 'job_limit');
  }
  // A canceled job frees its place.
  const ids = await Promise.all(admitted.map(acceptedJobId));
  await fetch(`${s.gateway.url}/animate/${ids[0]}`, { method: 'DELETE', headers: bearer(key) });
  const third = await submit(s.stack.gateways[1]!, key, long);
  ids.push(await acceptedJobId(third));
  for (const id of ids.slice(1))
    await fetch(`${s.gateway.url}/animate/${id}`, { method: 'DELETE', headers: bearer(key) });
});

test('file parts stream to the store: a large upload is never held in gateway memory; the sum of parts is limited', async (t) => {
  const enterprise = await s.key('enterprise');
  // The large upload goes through a gateway process of its own: its peak memory is measured.
  const measured = await spawnGateway(s.stack.gatewayEnv);
  t.after(() => measured.stop());
  const pid = measured.child.pid!;
  const before = peakRss(pid);
  // An MP4 header and then noise: accepted by its first bytes; the worker's ffmpeg refuses it later.
  const big = Buffer.alloc(BIG_UPLOAD, 7);
  Buffer.from('000000186674797069736f6d', 'hex').copy(big);
  const form = new FormData();
  form.set('backend', 'portrait');
  form.set('image', new Blob([new Uint8Array(fx.png)]), 'face.png');
  form.set('driving_video', new Blob([new Uint8Array(big)]), 'big.mp4');
  const res = await fetch(`${measured.url}/animate`, {
    method: 'POST',
    headers: bearer(enterprise.key),
    body: form,
  });
  const jobId = await acceptedJobId(res);
  const grown = peakRss(pid) - before;
  // Streamed buffers come and go before the collector runs, so some growth is normal; the part
  // itself (120 MB) is never held.
  assert.ok(grown < 64 * MB, `gateway peak memory grew by ${(grown / MB).toFixed(1)} MB for a 120 MB part`);
  const failed = await waitForJob(s.gateway, enterprise.key, jobId);
  assert.equal(failed.status, 'failed');
  assert.equal(failed.error?.code, 'invalid_request');
  assert.equal(failed.attempts, 1, 'undecodable media are not retried');

  const { key } = await s.key();
  // Just over the limit in sum, so the Content-Length check passes and the streamed count refuses it.
  // The local store keeps objects under objects/<key>.
  const uploads = join(s.objectsDir, 'objects', 'animation-inputs');
  const list = () => readdir(uploads).catch(() => [] as string[]);
  const existing = new Set(await list());
  const video = Buffer.alloc(16 * MB, 7);
  Buffer.from('000000186674797069736f6d', 'hex').copy(video);
  const wav = Buffer.alloc(UPLOAD_LIMIT - video.length - fx.png.length + 10 * 1024, 1);
  Buffer.from('RIFF\0\0\0\0WAVEfmt ', 'latin1').copy(wav);
  const over = new FormData();
  over.set('backend', 'portrait');
  over.set('image', new Blob([new Uint8Array(fx.png)]), 'face.png');
  over.set('driving_video', new Blob([new Uint8Array(video)]), 'a.mp4');
  over.set('audio', new Blob([new Uint8Array(wav)]), 'b.wav');
  const refused = await fetch(`${s.gateway.url}/animate`, {
    method: 'POST',
    headers: bearer(key),
    body: over,
  }).catch(
    () => null, // the gateway may close the connection before the client finishes sending
  );
  if (refused) {
    assert.equal(refused.status, 413);
    assert.equal((await errorOf(refused)).code, 'payload_too_large');
  }
  const added = (await list()).filter((dir) => !existing.has(dir));
  for (const dir of added) {
    assert.deepEqual(
      await readdir(join(uploads, dir), { recursive: true }),
      [],
      'a refused form keeps none of its parts',
    );
  }
  assert.equal((await listJobs(key)).length, 0, 'no job for the refused form');
});
