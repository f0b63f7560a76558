// /v1/videos through the official `openai` npm client (`client.videos`, which sends a multipart
// form), pointed at a real gateway over the animation stack: real NATS/JetStream job board, a real
// animation worker on the tiny development video-diffusion model, real ffmpeg. A video is an
// animation job in OpenAI's shape: created, polled to `completed`, listed, downloaded, canceled.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { bearer } from '../support/admin.js';
import {
  dataUrl,
  makeFixtures,
  startAnimationStack,
  type AnimationStack,
  type Fixtures,
} from '../support/animation.js';
import { sleep } from '../support/stack.js';

let s: AnimationStack;
let fx: Fixtures;
let client: OpenAI;
let apiKey: string;

before(async () => {
  [s, fx] = await Promise.all([startAnimationStack(), makeFixtures()]);
  apiKey = (await s.key()).key;
  client = new OpenAI({ apiKey, baseURL: `${s.gateway.url}/v1`, maxRetries: 0 });
});
after(async () => {
  await s?.stop();
  await fx?.remove();
});

// `fps` is an extension; `seconds` and `size` outside OpenAI's enums are within ours.
const small = () =>
  ({
    input_reference: { image_url: dataUrl('image/png', fx.png) },
    prompt: 'ignored',
    seconds: '1',
    size: '64x64',
    fps: 6,
  }) as unknown as OpenAI.VideoCreateParams;

async function waitFor(id: string, done: (v: OpenAI.Video) => boolean): Promise<OpenAI.Video> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const video = await client.videos.retrieve(id);
    if (done(video)) return video;
    if (Date.now() > deadline) throw new Error(`video ${id} still ${JSON.stringify(video)}`);
    await sleep(100);
  }
}

test('a queued video (no worker yet) is canceled by delete and then reads failed', async () => {
  const video = await client.videos.create(small());
  assert.equal(video.object, 'video');
  assert.equal(video.status, 'queued');
  assert.equal(video.model, 'video-diffusion');
  assert.match(video.id, /^job-/);
  const deleted = await client.videos.delete(video.id);
  assert.deepEqual(deleted, { id: video.id, object: 'video.deleted', deleted: true });
  const after = await client.videos.retrieve(video.id);
  assert.equal(after.status, 'failed');
  assert.equal(after.error?.code, 'canceled');
});

test('create, poll to completed, list, download the MP4; a finished video cannot be deleted', async () => {
  await s.startWorker();
  const created = await client.videos.create(small());
  assert.ok(Number.isInteger(created.created_at));
  assert.equal(created.seconds, '1');
  assert.equal(created.size, '64x64');
  const done = await waitFor(created.id, (v) => v.status === 'completed' || v.status === 'failed');
  assert.equal(done.status, 'completed', JSON.stringify(done.error));
  assert.equal(done.progress, 100);
  assert.equal(done.error, null);
  assert.equal(done.size, '64x64');
  assert.equal(done.seconds, '1');
  assert.ok(Number.isInteger(done.completed_at));

  const page = await client.videos.list({ limit: 1 });
  assert.equal(page.data.length, 1);
  assert.equal(page.data[0]!.id, created.id, 'newest first');
  assert.equal(page.has_more, true);
  const rest = await client.videos.list({ limit: 10, after: created.id });
  assert.ok(rest.data.every((v) => v.id !== created.id));

  const content = await client.videos.downloadContent(created.id);
  assert.equal(content.headers.get('content-type'), 'video/mp4');
  const mp4 = Buffer.from(await content.arrayBuffer());
  assert.equal(mp4.subarray(4, 8).toString('latin1'), 'ftyp');
  // The same bytes as /api/videos/<id>.mp4, with Range.
  const ranged = await fetch(`${s.gateway.url}/v1/videos/${created.id}/content`, {
    headers: { ...bearer(apiKey), range: 'bytes=0-7' },
  });
  assert.equal(ranged.status, 206);
  assert.deepEqual(Buffer.from(await ranged.arrayBuffer()), mp4.subarray(0, 8));
  // A range past the end: 416 with the size, and OpenAI's error body carrying the request id.
  const past = await fetch(`${s.gateway.url}/v1/videos/${created.id}/content`, {
    headers: { ...bearer(apiKey), range: 'bytes=999999999-' },
  });
  assert.equal(past.status, 416);
  assert.equal(past.headers.get('content-range'), `bytes */${mp4.length}`);
  const { error: refused } = (await past.json()) as { error: Record<string, unknown> };
  assert.equal(refused.code, 'invalid_request');
  assert.equal(refused.type, 'invalid_request_error');
  assert.equal(refused.param, null);
  assert.equal(refused.request_id, past.headers.get('x-request-id'));

  await assert.rejects(client.videos.delete(created.id), (error: unknown) => {
    assert.ok(error instanceof OpenAI.ConflictError);
    return true;
  });
  await assert.rejects(
    client.videos.downloadContent(created.id, { variant: 'thumbnail' }),
    (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.equal(error.param, 'variant');
      return true;
    },
  );
});

test('input_reference as a file part', async () => {
  const video = await client.videos.create({
    ...small(),
    input_reference: await toFile(fx.png, 'image.png', { type: 'image/png' }),
  });
  const done = await waitFor(video.id, (v) => v.status === 'completed' || v.status === 'failed');
  assert.equal(done.status, 'completed', JSON.stringify(done.error));
});

test('input_reference as a data: URL larger than 64 KB, which the client sends as a form field', async () => {
  assert.ok(fx.noisePng.length > 64 * 1024, `${fx.noisePng.length} bytes`);
  const video = await client.videos.create({
    ...small(),
    input_reference: { image_url: dataUrl('image/png', fx.noisePng) },
  });
  const done = await waitFor(video.id, (v) => v.status === 'completed' || v.status === 'failed');
  assert.equal(done.status, 'completed', JSON.stringify(done.error));
});

test('without input_reference, or with a bad seconds or size: 400 naming the field', async () => {
  for (const [body, param] of [
    [{ prompt: 'a cat' }, 'input_reference'],
    [{ ...small(), seconds: 'four' }, 'seconds'],
    [{ ...small(), size: '100x64' }, 'size'],
  ] as const) {
    await assert.rejects(client.videos.create(body as OpenAI.VideoCreateParams), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.equal(error.param, param);
      return true;
    });
  }
});

test('a basic-tier key → PermissionDeniedError; another key sees no video', async () => {
  const basic = new OpenAI({ apiKey: (await s.key('basic')).key, baseURL: client.baseURL, maxRetries: 0 });
  await assert.rejects(basic.videos.list(), (error: unknown) => {
    assert.ok(error instanceof OpenAI.PermissionDeniedError, String(error));
    return true;
  });
  const other = new OpenAI({ apiKey: (await s.key()).key, baseURL: client.baseURL, maxRetries: 0 });
  const mine = (await client.videos.list()).data[0]!;
  await assert.rejects(other.videos.retrieve(mine.id), OpenAI.NotFoundError);
  assert.equal((await other.videos.list()).data.length, 0);
});
