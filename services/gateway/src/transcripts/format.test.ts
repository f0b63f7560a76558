import assert from 'node:assert/strict';
import { test } from 'node:test';
import { render, timestamp, toSrt, toVtt } from './format.js';

test('timestamps carry hours and round milliseconds once', () => {
  assert.equal(timestamp(0, ','), '00:00:00,000');
  assert.equal(timestamp(3725.0006, ','), '01:02:05,001');
  assert.equal(timestamp(59.9996, '.'), '00:01:00.000');
  assert.equal(timestamp(-1, '.'), '00:00:00.000');
});

test('srt numbers cues from 1 with a blank line between them', () => {
  const srt = toSrt([
    { start: 0, end: 1.5, text: ' Hello ' },
    { start: 1.5, end: 3725, text: 'two\n\nlines' },
  ]);
  assert.equal(
    srt,
    '1\n00:00:00,000 --> 00:00:01,500\nHello\n\n2\n00:00:01,500 --> 01:02:05,000\ntwo\nlines\n',
  );
});

test('vtt starts with WEBVTT and rewrites an arrow inside cue text', () => {
  const vtt = toVtt([{ start: 1, end: 2, text: 'a --> b <i>' }]);
  assert.equal(vtt, 'WEBVTT\n\n00:00:01.000 --> 00:00:02.000\na -> b <i>\n');
});

test('json and text formats', () => {
  const transcript = {
    text: ' hi ',
    language: 'en',
    duration_s: 2,
    segments: [{ start: 0, end: 2, text: ' hi' }],
  };
  assert.deepEqual(JSON.parse(render(transcript, 'json')), {
    text: 'hi',
    language: 'en',
    duration_s: 2,
    segments: [{ start: 0, end: 2, text: 'hi' }],
  });
  assert.equal(render(transcript, 'text'), 'hi\n');
  assert.equal(render({ ...transcript, text: '' }, 'text'), '');
  assert.equal(render({ ...transcript, segments: [] }, 'vtt'), 'WEBVTT\n');
});
