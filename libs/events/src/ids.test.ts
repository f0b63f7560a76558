import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isEventId, newEventId } from './ids.js';

test('event ids have the evt_ form and sort by the time they were made', () => {
  const earlier = newEventId(Date.UTC(2026, 0, 1));
  const later = newEventId(Date.UTC(2026, 0, 1) + 1);
  assert.ok(isEventId(earlier), earlier);
  assert.equal(earlier.length, 4 + 26);
  assert.ok(earlier < later);
  assert.ok(newEventId(0) < newEventId(Date.UTC(2100, 0, 1)));
});

test('ids made in the same millisecond differ and sort in the order they were made', () => {
  const ids = Array.from({ length: 1000 }, () => newEventId(1_700_000_000_000));
  assert.equal(new Set(ids).size, 1000);
  assert.deepEqual([...ids].sort(), ids);
  // An id of another millisecond in between starts afresh, and still sorts by its time.
  const before = newEventId(1_700_000_000_000);
  const earlier = newEventId(1_699_999_999_999);
  assert.ok(earlier < before);
});
