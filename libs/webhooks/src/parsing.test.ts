import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WebhookInputError } from './errors.js';
import { isDeliverable, matchesFilter, parseEventFilter, WEBHOOK_EVENT_TYPES } from './event-types.js';
import { newDeliveryId, newEndpointId, newEventId, timeSortableId } from './ids.js';
import { DEFAULT_RETRY_SCHEDULE, parseDuration, parseRetrySchedule } from './retry-schedule.js';
import { newSecret, SecretBox } from './secrets.js';

describe('event filters', () => {
  test('missing or empty means every type', () => {
    assert.deepEqual(parseEventFilter(undefined), ['*']);
    assert.deepEqual(parseEventFilter([]), ['*']);
    assert.deepEqual(parseEventFilter(['animate.job.succeeded', '*']), ['*']);
  });

  test('known types and prefix patterns pass; anything else is refused on `events`', () => {
    assert.deepEqual(
      parseEventFilter(['animate.job.*', 'browser.session.created', 'browser.session.created']),
      ['animate.job.*', 'browser.session.created'],
    );
    assert.deepEqual(parseEventFilter(['browser.*', 'usage.quota.*']), ['browser.*', 'usage.quota.*']);
    for (const bad of [
      'keys.created',
      'animate.job.done',
      'nothing.*',
      'animate.*.queued',
      5,
      '',
    ] as unknown[]) {
      assert.throws(
        () => parseEventFilter([bad]),
        (error: unknown) => error instanceof WebhookInputError && error.param === 'events',
        String(bad),
      );
    }
    assert.throws(() => parseEventFilter('animate.job.*'), WebhookInputError);
  });

  test('matching: all, exact, prefix; the webhooks’ own events always match', () => {
    assert.ok(matchesFilter(['*'], 'browser.session.closed'));
    assert.ok(matchesFilter(['animate.job.*'], 'animate.job.failed'));
    assert.ok(!matchesFilter(['animate.job.*'], 'browser.session.closed'));
    assert.ok(matchesFilter(['browser.session.closed'], 'browser.session.closed'));
    assert.ok(!matchesFilter(['browser.session.closed'], 'browser.session.created'));
    assert.ok(matchesFilter(['usage.quota.warning'], 'webhook.test'));
    assert.ok(matchesFilter(['usage.quota.warning'], 'webhook.endpoint.disabled'));
  });

  test('deliverable types: a key’s own areas, never keys.*', () => {
    for (const type of WEBHOOK_EVENT_TYPES) assert.ok(isDeliverable(type), type);
    assert.ok(!isDeliverable('keys.created'));
    assert.ok(!isDeliverable('webhook.other'));
  });
});

describe('ids', () => {
  test('prefixed, 26 characters, and later ids sort after earlier ones', () => {
    assert.match(newEventId(), /^evt_[0-9A-Z]{26}$/);
    assert.match(newEndpointId(), /^wh_[0-9A-Z]{26}$/);
    assert.match(newDeliveryId(), /^whd_[0-9A-Z]{26}$/);
    const ids = [1_000, 2_000, 1_700_000_000_000, 1_700_000_000_001].map((t) => timeSortableId(t));
    assert.deepEqual([...ids].sort(), ids);
    assert.notEqual(timeSortableId(5), timeSortableId(5));
  });
});

describe('retry schedule', () => {
  test('durations in ms, s, m, h and d', () => {
    assert.deepEqual(
      parseRetrySchedule(DEFAULT_RETRY_SCHEDULE),
      [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
    );
    assert.deepEqual(parseRetrySchedule('250ms, 1s,1d'), [250, 1_000, 86_400_000]);
    assert.equal(parseDuration('5d'), 432_000_000);
  });

  test('a bad entry is refused', () => {
    for (const bad of ['', '5', '5s,,5m', '5w', '-1s', 'soon'])
      assert.throws(() => parseRetrySchedule(bad), bad);
  });
});

describe('SecretBox', () => {
  test('opens what it sealed; another key, or a changed byte, cannot', () => {
    const box = new SecretBox('k'.repeat(40));
    const secret = newSecret();
    const sealed = box.seal(secret);
    assert.ok(!sealed.toString('latin1').includes(secret));
    assert.ok(!sealed.includes(Buffer.from(secret.slice(6), 'base64')));
    assert.equal(box.open(sealed), secret);
    assert.notDeepEqual(box.seal(secret), sealed);
    assert.equal(new SecretBox('k'.repeat(40)).open(sealed), secret);
    assert.throws(() => new SecretBox('j'.repeat(40)).open(sealed));
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    assert.throws(() => box.open(tampered));
  });

  test('a short key material is refused', () => {
    assert.throws(() => new SecretBox('short'));
  });
});
