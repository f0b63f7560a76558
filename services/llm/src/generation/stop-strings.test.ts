import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
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

test('stop strings that overlap or contain each other: the earliest-starting match wins', () => {
  assert.deepEqual(run(['abcd', 'c'], ['xabcd']).sent, ['x']);
  assert.deepEqual(run(['abcd', 'c'], ['xab', 'cz']).sent, ['x', 'ab']);
  assert.deepEqual(run(['ab', 'b', 'abc'], ['a', 'bc']), { sent: ['', ''], stopped: true, rest: '' });
  assert.deepEqual(run([''], ['a']), { sent: [''], stopped: true, rest: '' });
  assert.deepEqual(run(['aab'], ['aaa', 'ab']), { sent: ['a', 'a'], stopped: true, rest: '' });
});

/** Today's straightforward matcher, the reference: search all of held + piece on every push. */
class ReferenceMatcher {
  private held = '';
  constructor(private readonly stops: readonly string[]) {}

  push(piece: string): { text: string; stopped: boolean } {
    const buffer = this.held + piece;
    const starts = this.stops.map((stop) => buffer.indexOf(stop)).filter((at) => at >= 0);
    if (starts.length > 0) {
      this.held = '';
      return { text: buffer.slice(0, Math.min(...starts)), stopped: true };
    }
    let keep = 0;
    for (const stop of this.stops)
      for (let n = Math.min(stop.length - 1, buffer.length); n > keep; n--)
        if (buffer.endsWith(stop.slice(0, n))) keep = n;
    this.held = buffer.slice(buffer.length - keep);
    return { text: buffer.slice(0, buffer.length - keep), stopped: false };
  }

  flush(): string {
    const rest = this.held;
    this.held = '';
    return rest;
  }
}

test('the same output as the straightforward matcher, over random stops and piece splits', () => {
  // A small alphabet makes overlaps and near-misses common; the emoji are surrogate pairs sharing
  // their high half, so a stop string can match half of one.
  const alphabet = ['a', 'b', 'c', 'a', 'b', 'é', '🙂', '🙃', '\uD83D'];
  let seed = 1;
  // The high bits of the generator: its low bits repeat with short periods.
  const random = (n: number) => Math.floor(((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * n);
  const word = (max: number) =>
    Array.from({ length: random(max + 1) }, () => alphabet[random(alphabet.length)]).join('');
  for (let round = 0; round < 5000; round++) {
    const stops = Array.from({ length: 1 + random(4) }, () => word(4)).filter(Boolean);
    // Stops inside other stops: a prefix ("ab", "abc") or a middle part ("abcd", "c").
    const first = stops[0] ?? '';
    const from = random(first.length);
    if (random(2) === 0 && first.length > 0) stops.push(first.slice(from, from + 1 + random(first.length)));
    // Text made of stop strings, their parts and other characters, cut at random places.
    const parts = Array.from({ length: random(8) }, () => {
      const stop = stops[random(stops.length)] ?? '';
      return random(2) === 0 ? word(3) : stop.slice(random(2), stop.length - random(2));
    });
    const pieces = split(parts.join(''), random);
    const matcher = new StopMatcher(stops);
    const reference = new ReferenceMatcher(stops);
    for (const piece of pieces) {
      const expected = reference.push(piece);
      assert.deepEqual(matcher.push(piece), expected, JSON.stringify({ stops, pieces, piece }));
    }
    assert.equal(matcher.flush(), reference.flush(), JSON.stringify({ stops, pieces }));
  }
});

/** `text` cut into pieces of 0 to 4 code units (a surrogate pair may be cut in two). */
function split(text: string, random: (n: number) => number): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < text.length || random(3) === 0;) {
    const length = random(5);
    pieces.push(text.slice(at, at + length));
    at += length;
  }
  return pieces;
}

test('a push costs the piece, not the text so far or the stop strings held back', () => {
  const stop = `${'a'.repeat(100_000)}b`;
  const matcher = new StopMatcher([stop, 'zz']);
  const started = performance.now();
  for (let i = 0; i < 200_000; i++) assert.equal(matcher.push('a').stopped, false);
  assert.equal(matcher.push('b').stopped, true);
  // The straightforward matcher compares the held text with every prefix of the stop string
  // on every push: billions of character comparisons here.
  assert.ok(performance.now() - started < 5000, 'pushes stay cheap while a long stop string is held');
});
