import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StopMatcher } from './stop-strings.js';

function run(stops: string[], pieces: string[]): { sent: string[]; stopped: boolean; rest: string } {
  const matcher = new StopMatcher(stops);
  const sent: string[] = [];
  for (const piece of pieces) {
    const { text, stopped } = matcher.push(piece);
    sent.push(text);
    if (stopped) return { sent, stopped, rest: '' };
  }
  return { sent, stopped: false, rest: matcher.flush() };
}

test('text before a stop string is sent, the stop string and what follows are not', () => {
  assert.deepEqual(run(['END'], ['hello ', 'wor', 'ld END and more']), {
    sent: ['hello ', 'wor', 'ld '],
    stopped: true,
    rest: '',
  });
});

test('a stop string split over pieces is held back until it completes', () => {
  const result = run(['\n\nUser:'], ['Hi', '\n', '\nUs', 'er:', 'x']);
  assert.deepEqual(result.sent, ['Hi', '', '', '']);
  assert.equal(result.stopped, true);
});

test('held text that turns out not to be a stop string is released', () => {
  const result = run(['abc'], ['xa', 'b', 'd', 'ab']);
  assert.deepEqual(result.sent, ['x', '', 'abd', '']);
  assert.equal(result.stopped, false);
  assert.equal(result.rest, 'ab', 'flush releases a partial match at the end');
});

test('the earliest of several stop strings wins; no stops passes everything through', () => {
  assert.deepEqual(run(['zz', 'b'], ['aazzb']).sent, ['aa']);
  assert.deepEqual(run(['zz', 'b'], ['abzz']).sent, ['a']);
  assert.deepEqual(run([], ['a', 'b']), { sent: ['a', 'b'], stopped: false, rest: '' });
});

test('a stop string at the very start yields empty text', () => {
  assert.deepEqual(run(['.'], ['.', 'x']), { sent: [''], stopped: true, rest: '' });
});
