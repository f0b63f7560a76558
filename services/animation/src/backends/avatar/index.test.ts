// The back-end's face without a vendor: unconfigured it says so and refuses jobs `unavailable`;
// configured it refuses a job with neither audio nor text before making any call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '@switchboard/telemetry';
import { PermanentJobError, type RenderRequest, type VideoOutput } from '../backend.js';
import { createAvatarBackend } from './index.js';

const logger = createLogger({ service: 'test', level: 'silent' });
const base = {
  deadlineMs: 1000,
  pollIntervalMs: 10,
  requestTimeoutMs: 1000,
  ffmpeg: { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' },
  logger,
};

const request = (params: Partial<RenderRequest['params']>, audio?: string): RenderRequest => ({
  jobId: 'job-1',
  params: { motion_bucket_id: 127, noise_aug_strength: 0.02, ...params },
  inputs: { image: '/nonexistent/image.png', audio },
  workDir: '/nonexistent',
  signal: new AbortController().signal,
  progress: () => undefined,
  logger,
});

const out: VideoOutput = {
  frames: () => Promise.reject(new Error('not used')),
  transcode: () => Promise.reject(new Error('not used')),
};

test('without a base URL or key the back-end is unconfigured and refuses jobs as unavailable', async () => {
  for (const options of [
    {},
    { baseUrl: 'https://api.d-id.com' },
    { apiKey: 'k' },
    { baseUrl: '', apiKey: 'k' },
  ]) {
    const backend = createAvatarBackend({ ...base, ...options });
    const info = backend.describe();
    assert.equal(info.name, 'avatar');
    assert.equal(info.configured, false);
    assert.equal(info.models.length, 1);
    assert.match(info.models[0]?.description ?? '', /AVATAR_BASE_URL\/AVATAR_API_KEY/);
    await backend.ready();
    await assert.rejects(backend.render(request({ text: 'hi' }), out), (error) => {
      assert.ok(error instanceof PermanentJobError);
      assert.equal(error.code, 'unavailable');
      return true;
    });
    await backend.dispose();
  }
});

test('configured, it is ready at once and refuses a job with no driver before any call', async () => {
  let calls = 0;
  const backend = createAvatarBackend({
    ...base,
    baseUrl: 'https://vendor.test',
    apiKey: 'k',
    fetch: async () => {
      calls += 1;
      return new Response('{}');
    },
  });
  assert.equal(backend.describe().configured, true);
  assert.equal(backend.describe().models[0]?.status, 'ready');
  await backend.ready();
  await assert.rejects(backend.render(request({ text: '  ' }), out), (error) => {
    assert.ok(error instanceof PermanentJobError);
    assert.equal(error.code, 'invalid_request');
    return true;
  });
  assert.equal(calls, 0);
});

test('a malformed base URL fails at construction', () => {
  assert.throws(() => createAvatarBackend({ ...base, baseUrl: 'not a url', apiKey: 'k' }));
});
