import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TabReserver } from '../chromium/browser-targets.js';
import { PendingTabs } from './pending-tabs.js';

/** A bound of `max` places that records how each was given back. */
function reserver(max: number) {
  const released: (string | undefined)[] = [];
  let held = 0;
  const tabs: TabReserver = {
    maxTabs: max,
    reserveTab: () => {
      if (held >= max) return null;
      held++;
      return (id) => {
        held--;
        released.push(id);
      };
    },
  };
  return { tabs, released, held: () => held };
}

const answer = (message: object) => Buffer.from(JSON.stringify(message));

test('a create holds its place until its own answer, matched by id and flattened session', () => {
  const { tabs, released, held } = reserver(2);
  const pending = new PendingTabs(tabs);
  assert.equal(pending.reserve({ id: 1, method: 'Target.createTarget' }), null);
  assert.equal(pending.reserve({ id: 1, method: 'Target.createTarget', sessionId: 'S' }), null);
  assert.match(pending.reserve({ id: 2, method: 'Target.createTarget' }) ?? '', /2 tabs open/);
  pending.observe(answer({ method: 'Target.targetCreated', params: {} }));
  pending.observe(answer({ id: 1, result: {}, sessionId: 'other' }));
  pending.observe(Buffer.from('not json'));
  assert.equal(held(), 2);
  pending.observe(answer({ id: 1, result: { targetId: 'T1' } }));
  assert.deepEqual(released, ['T1']);
  pending.observe(answer({ id: 1, error: { code: -32000, message: 'no' }, sessionId: 'S' }));
  assert.deepEqual(released, ['T1', undefined]);
  assert.equal(held(), 0);
});

test('a connection that ends gives back every place it held', () => {
  const { tabs, held } = reserver(3);
  const pending = new PendingTabs(tabs);
  pending.reserve({ id: 1, method: 'Target.createTarget' });
  pending.reserve({ id: 2, method: 'Target.createTarget' });
  pending.releaseAll();
  assert.equal(held(), 0);
  pending.observe(answer({ id: 1, result: { targetId: 'late' } }));
  assert.equal(held(), 0);
});
