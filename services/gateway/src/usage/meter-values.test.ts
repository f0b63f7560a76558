import { test } from 'node:test';
import assert from 'node:assert/strict';
import { completionValues, imageValues, sessionSeconds, transcriptionValues } from './meter-values.js';
import { jobReservation } from './job-usage.js';

test('a completion counts one request and the worker’s token counts', () => {
  assert.deepEqual(completionValues({ prompt_tokens: 12, completion_tokens: 30 }), {
    requests: 1,
    input_tokens: 12,
    output_tokens: 30,
  });
  // A worker answer without usage still counts the request.
  assert.deepEqual(completionValues(null), { requests: 1, input_tokens: 0, output_tokens: 0 });
});

test('images count each image and width × height × steps / 10⁶, summed', () => {
  const values = imageValues([
    { width: 512, height: 512, steps: 20 },
    { width: 1024, height: 768, steps: 30 },
  ]);
  assert.equal(values.images, 2);
  assert.equal(values.megapixel_steps, (512 * 512 * 20 + 1024 * 768 * 30) / 1e6);
  assert.deepEqual(imageValues([]), { images: 0, megapixel_steps: 0 });
});

test('a transcription counts its decoded seconds; a negative duration is not a credit', () => {
  assert.deepEqual(transcriptionValues(61.25), { requests: 1, audio_seconds: 61.25 });
  assert.deepEqual(transcriptionValues(-5), { requests: 1, audio_seconds: 0 });
});

test('a session counts from creation to its end, never below zero', () => {
  const created = '2026-11-28T10:00:00.000Z';
  assert.equal(sessionSeconds(created, Date.parse('2026-11-28T10:10:30.500Z')), 630.5);
  assert.equal(sessionSeconds(created, Date.parse('2026-11-28T09:00:00.000Z')), 0);
  assert.equal(sessionSeconds('not a date', Date.now()), 0);
});

test('a job reserves frames and seconds when its request fixes them, else checks the quotas', () => {
  assert.deepEqual(jobReservation({ fps: 7, duration_s: 2.5 }), {
    reserve: { video_frames: 18, video_seconds: 2.5 },
    check: [],
  });
  assert.deepEqual(jobReservation({ fps: 7 }), { reserve: {}, check: ['video_frames', 'video_seconds'] });
  assert.deepEqual(jobReservation({}), { reserve: {}, check: ['video_frames', 'video_seconds'] });
});
