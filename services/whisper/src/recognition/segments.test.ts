import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toSegments } from './segments.js';

test('keeps well-formed chunks as they are, text trimmed, times to the millisecond', () => {
  assert.deepEqual(
    toSegments(
      [
        { text: ' Hello there.', timestamp: [0, 1.2345] },
        { text: ' General Kenobi.', timestamp: [1.5, 3] },
      ],
      10,
    ),
    [
      { start: 0, end: 1.235, text: 'Hello there.' },
      { start: 1.5, end: 3, text: 'General Kenobi.' },
    ],
  );
});

test('a start before the previous end moves up to it; an end before its start meets it', () => {
  assert.deepEqual(
    toSegments(
      [
        { text: 'a', timestamp: [0, 5] },
        { text: 'b', timestamp: [4, 3] },
        { text: 'c', timestamp: [6, 7] },
      ],
      10,
    ),
    [
      { start: 0, end: 5, text: 'a' },
      { start: 5, end: 5, text: 'b' },
      { start: 6, end: 7, text: 'c' },
    ],
  );
});

test('missing timestamps: start at the previous end, end at the end of the audio', () => {
  assert.deepEqual(
    toSegments(
      [
        { text: 'a', timestamp: [null, 2] },
        { text: 'b', timestamp: [null, null] },
      ],
      4.5,
    ),
    [
      { start: 0, end: 2, text: 'a' },
      { start: 2, end: 4.5, text: 'b' },
    ],
  );
});

test('nothing ends after the audio; segments past its end shrink to nothing at the end', () => {
  assert.deepEqual(
    toSegments(
      [
        { text: 'a', timestamp: [1, 30] },
        { text: 'b', timestamp: [31, 32] },
      ],
      12.25,
    ),
    [
      { start: 1, end: 12.25, text: 'a' },
      { start: 12.25, end: 12.25, text: 'b' },
    ],
  );
});

test('empty and whitespace-only chunks are dropped; NaN times fall back to the neighbours', () => {
  assert.deepEqual(
    toSegments(
      [
        { text: '  ', timestamp: [0, 1] },
        { text: 'x', timestamp: [Number.NaN, Number.NaN] },
      ],
      3,
    ),
    [{ start: 0, end: 0, text: 'x' }],
  );
});
