import assert from 'node:assert/strict';
import { test } from 'node:test';
import { storedEventOf } from './event-stream.js';

const id = 'evt_01KB0000000000000000000000';

test("a key's deliverable event is kept with its id, time, data and trace", () => {
  const event = storedEventOf(
    'switchboard.events.animate.job.succeeded',
    {
      id,
      at: '2026-03-01T12:00:00.000Z',
      key_id: 'key1',
      job_id: 'job-1',
      data: { job_id: 'job-1', status: 'succeeded' },
    },
    '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  );
  assert.deepEqual(event, {
    id,
    key_id: 'key1',
    type: 'animate.job.succeeded',
    occurred_at: '2026-03-01T12:00:00.000Z',
    data: { job_id: 'job-1', status: 'succeeded' },
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  });
});

test('events that are not for webhooks are ignored', () => {
  const body = { id, at: '2026-03-01T12:00:00.000Z', key_id: 'key1', data: {} };
  assert.equal(storedEventOf('switchboard.events.keys.created', body, undefined), null, 'not deliverable');
  assert.equal(storedEventOf('switchboard.events.webhook.test', body, undefined), null, 'never from NATS');
  assert.equal(
    storedEventOf('switchboard.events.browser.session.created', { ...body, key_id: undefined }, undefined),
    null,
  );
  assert.equal(storedEventOf('switchboard.events.browser.session.created', [body], undefined), null);
  assert.equal(storedEventOf('other.browser.session.created', body, undefined), null);
});

test('an event without data delivers its own fields; one without an id gets one', () => {
  const event = storedEventOf(
    'switchboard.events.usage.quota.warning',
    { key_id: 'key1', meter: 'images', used: 80 },
    undefined,
  );
  assert.ok(event);
  assert.match(event.id, /^evt_/);
  assert.deepEqual(event.data, { meter: 'images', used: 80 });
  assert.equal(event.traceparent, undefined);
});
