import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchboardError } from '@switchboard/errors';
import { MAX_BUCKETS, parseGroupBy, usageQueryFrom } from './query-params.js';

const now = new Date('2026-11-28T06:47:12.345Z');

function paramOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof SwitchboardError);
    assert.equal(error.code, 'invalid_request');
    return error.param;
  }
  assert.fail('expected a validation error');
}

test('defaults: the last 7 days in day buckets, rounded out to UTC midnights, split by capability, model, meter', () => {
  const query = usageQueryFrom({}, ['k1'], false, now);
  assert.equal(query.start.toISOString(), '2026-11-21T00:00:00.000Z');
  assert.equal(query.end.toISOString(), '2026-11-29T00:00:00.000Z');
  assert.equal(query.bucket, 'day');
  assert.deepEqual(query.keyIds, ['k1']);
  assert.deepEqual([...query.groupBy].sort(), ['capability', 'meter', 'model']);
});

test('edges: offsets are honoured, start floored and end ceiled to the hour; an edge already on a bucket stays', () => {
  const query = usageQueryFrom(
    { start: '2026-11-28T01:30:00+02:00', end: '2026-11-28T03:00:00Z', bucket: 'hour' },
    null,
    true,
    now,
  );
  assert.equal(query.start.toISOString(), '2026-11-27T23:00:00.000Z');
  assert.equal(query.end.toISOString(), '2026-11-28T03:00:00.000Z');
});

test('start must be before end', () => {
  assert.equal(
    paramOf(() =>
      usageQueryFrom({ start: '2026-11-28T00:00:00Z', end: '2026-11-28T00:00:00Z' }, null, true, now),
    ),
    'start',
  );
  assert.equal(
    paramOf(() =>
      usageQueryFrom({ start: '2026-11-29T00:00:00Z', end: '2026-11-28T00:00:00Z' }, null, true, now),
    ),
    'start',
  );
});

test('bad dates are named', () => {
  assert.equal(
    paramOf(() => usageQueryFrom({ start: 'yesterday' }, null, true, now)),
    'start',
  );
  assert.equal(
    paramOf(() => usageQueryFrom({ end: '2026-13-45T00:00:00Z' }, null, true, now)),
    'end',
  );
});

test('at most 1,000 buckets: exactly 1,000 passes, 1,001 is refused', () => {
  const end = '2026-11-28T00:00:00Z';
  const start = new Date(Date.parse(end) - MAX_BUCKETS * 3_600_000).toISOString();
  assert.doesNotThrow(() => usageQueryFrom({ start, end, bucket: 'hour' }, null, true, now));
  const tooEarly = new Date(Date.parse(start) - 1).toISOString();
  assert.equal(
    paramOf(() => usageQueryFrom({ start: tooEarly, end, bucket: 'hour' }, null, true, now)),
    'start',
  );
  assert.equal(
    paramOf(() => usageQueryFrom({ start: '1970-01-01T00:00:00Z', end }, null, true, now)),
    'start',
  );
});

test('group_by: meter is always split; key_id only for the admin; unknown values refused', () => {
  assert.deepEqual(parseGroupBy('capability', false).sort(), ['capability', 'meter']);
  assert.deepEqual(parseGroupBy('key_id,model', true).sort(), ['key_id', 'meter', 'model']);
  assert.deepEqual(parseGroupBy('', false), ['meter']);
  assert.equal(
    paramOf(() => parseGroupBy('key_id', false)),
    'group_by',
  );
  assert.equal(
    paramOf(() => parseGroupBy('capability,__proto__', true)),
    'group_by',
  );
});
