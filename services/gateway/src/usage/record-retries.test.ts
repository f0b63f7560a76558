import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { UsageRecord } from '@switchboard/usage';
import { RecordRetries, type PendingRecord } from './record-retries.js';

const logger = pino({ level: 'silent' });
const record = (id: string): UsageRecord => ({
  id,
  key_id: 'k1',
  capability: 'diffusion',
  model: null,
  at: new Date('2026-11-28T10:00:00Z'),
  values: { images: 1 },
});
// Timers far off: each test flushes by hand, so nothing depends on time passing.
const manual = { capacity: 2, firstDelayMs: 3_600_000, maxDelayMs: 3_600_000 };

test('records that failed are written again, in order, once the store answers', async () => {
  const stored: string[] = [];
  let storeUp = false;
  const outcomes: string[] = [];
  const retries = new RecordRetries(
    (pending: PendingRecord) => {
      if (!storeUp) return Promise.reject(new Error('store down'));
      stored.push(pending.record.id);
      return Promise.resolve();
    },
    logger,
    (outcome) => outcomes.push(outcome),
    manual,
  );
  retries.add({ record: record('call:a'), quotas: {} }, new Error('store down'));
  retries.add({ record: record('call:b'), quotas: {} }, new Error('store down'));
  await retries.flush();
  assert.deepEqual(stored, [], 'still down: nothing written, nothing lost');
  assert.equal(retries.size, 2);
  storeUp = true;
  await retries.flush();
  assert.deepEqual(stored, ['call:a', 'call:b']);
  assert.equal(retries.size, 0);
  assert.deepEqual(outcomes, ['retried', 'retried']);
  retries.close();
});

test('past its capacity the queue drops (and counts) a failed record instead of growing', () => {
  const outcomes: string[] = [];
  const retries = new RecordRetries(
    () => Promise.reject(new Error('down')),
    logger,
    (o) => outcomes.push(o),
    manual,
  );
  for (const id of ['a', 'b', 'c']) retries.add({ record: record(id), quotas: {} }, new Error('down'));
  assert.equal(retries.size, 2);
  assert.deepEqual(outcomes, ['retried', 'retried', 'dropped']);
  retries.close();
  assert.equal(retries.size, 0);
});
