// The clip spec from the vendor's video: even size, fps asked or the vendor's or 25, length cut at
// duration_s, frames = round(fps x length), and the job's audio passed on when there is one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clipSpec } from './spec.js';

const video = { width: 513, height: 287, fps: 25, duration: 3.2 };

test('the vendor video decides size, rate and length when the job asks nothing', () => {
  assert.deepEqual(clipSpec(video, {}, undefined), { width: 512, height: 286, fps: 25, frames: 80 });
});

test('fps and duration_s asked by the job win; duration_s only ever cuts', () => {
  assert.deepEqual(clipSpec(video, { fps: 10, duration_s: 1.5 }, '/in/audio.mp3'), {
    width: 512,
    height: 286,
    fps: 10,
    frames: 15,
    audio: '/in/audio.mp3',
  });
  assert.equal(clipSpec(video, { duration_s: 60 }, undefined)?.frames, 80);
});

test('a vendor rate the contract cannot carry, or none, falls back to 25 fps', () => {
  assert.equal(clipSpec({ ...video, fps: undefined }, {}, undefined)?.fps, 25);
  assert.equal(clipSpec({ ...video, fps: 90_000 }, {}, undefined)?.fps, 25);
  assert.equal(clipSpec({ ...video, fps: 30_000 / 1001 }, {}, undefined)?.frames, 96);
});

test('at least one frame; no size or no length gives nothing', () => {
  assert.equal(clipSpec({ ...video, duration: 0.01 }, {}, undefined)?.frames, 1);
  assert.equal(clipSpec({ ...video, duration: undefined }, {}, undefined), undefined);
  assert.equal(clipSpec({ ...video, width: 0 }, {}, undefined), undefined);
});
