// POST /v1/images/generations through the official `openai` npm client, pointed at a real gateway
// over a real diffusion worker (the tiny random-weight pipeline) with the PNGs in a real
// S3-protocol server: `url` (readable with the same key) and `b64_json` (the PNG inline), of the
// size asked, and the 400s OpenAI's client reports as BadRequestError with `param`.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { pngSize } from '../support/png.js';
import { startS3, type S3Server } from '../support/s3.js';
import { type ModelStack, startModelStack } from '../support/stack.js';

const bucket = 'switchboard-images';
let s3: S3Server;
let diffusion: ModelStack;
let key: CreatedKey;
let client: OpenAI;

before(async () => {
  s3 = await startS3();
  diffusion = await startModelStack('diffusion', { sharedEnv: s3.env(bucket) });
  key = await createKey(diffusion.stack.gateway, { rate_limit_per_minute: 10_000 });
  client = new OpenAI({ apiKey: key.key, baseURL: `${diffusion.stack.gateway.url}/v1`, maxRetries: 0 });
});
after(async () => {
  await diffusion?.stop();
  await s3?.stop();
});

// `steps` and `seed` are extensions; OpenAI's client passes unknown fields through.
const small = {
  prompt: 'a red square',
  size: '128x64',
  steps: 2,
  seed: 7,
} as OpenAI.ImageGenerateParamsNonStreaming;

test('response_format url: a link to a PNG of the asked size, readable with the same key', async () => {
  const images = await client.images.generate({ ...small, n: 2, response_format: 'url' });
  assert.ok(Number.isInteger(images.created));
  assert.equal(images.data?.length, 2, 'n images');
  const pngs: Buffer[] = [];
  for (const image of images.data) {
    assert.equal(image.b64_json, undefined);
    assert.match(image.url!, new RegExp(`^${diffusion.stack.gateway.url}/api/images/img-[^/]+\\.png$`));
    const res = await fetch(image.url!, { headers: bearer(key.key) });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    const png = Buffer.from(await res.arrayBuffer());
    assert.deepEqual(pngSize(png), { width: 128, height: 64 });
    pngs.push(png);
  }
  assert.ok(!pngs[0]!.equals(pngs[1]!), 'image i gets seed + i: two different images');
  assert.equal((await fetch(images.data[0]!.url!)).status, 401, 'not without the key');
});

test('response_format b64_json: the same PNG inline', async () => {
  const images = await client.images.generate({ ...small, response_format: 'b64_json' });
  assert.equal(images.data?.length, 1);
  const png = Buffer.from(images.data[0]!.b64_json!, 'base64');
  assert.deepEqual(pngSize(png), { width: 128, height: 64 });
  const viaUrl = await client.images.generate({ ...small, response_format: 'url' });
  const res = await fetch(viaUrl.data![0]!.url!, { headers: bearer(key.key) });
  assert.ok(png.equals(Buffer.from(await res.arrayBuffer())), 'same seed, same image');
});

test('bad sizes and counts are BadRequestError naming the param', async () => {
  for (const [body, param] of [
    [{ size: '100x100' }, 'size'],
    [{ size: 'large' }, 'size'],
    [{ size: '4096x64' }, 'size'],
    [{ n: 5 }, 'n'],
    [{ response_format: 'png' }, 'response_format'],
    [{ prompt: '' }, 'prompt'],
  ] as const) {
    await assert.rejects(
      client.images.generate({ ...small, ...body } as OpenAI.ImageGenerateParamsNonStreaming),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError, `${JSON.stringify(body)}: ${String(error)}`);
        assert.equal(error.param, param);
        assert.equal(error.code, 'invalid_request');
        return true;
      },
    );
  }
});
