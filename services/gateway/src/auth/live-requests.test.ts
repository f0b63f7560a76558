import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { Response } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import { LiveRequests } from './live-requests.js';

/** The part of a response the tracker uses: its close event and destroy(). */
class FakeResponse extends EventEmitter {
  destroyed = false;
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

const asResponse = (r: FakeResponse) => r as unknown as Response;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('requests whose access check fails are ended at the next sweep, with its reason; others stay', async () => {
  const live = new LiveRequests(20);
  const access: { refusal?: SwitchboardError } = {};
  const cut = new FakeResponse();
  const graceful = new FakeResponse();
  const other = new FakeResponse();
  const reasons: string[] = [];
  live.track(asResponse(cut), () => access.refusal);
  live.track(
    asResponse(graceful),
    () => access.refusal,
    (reason) => reasons.push(reason.code),
  );
  live.track(asResponse(other), () => undefined);
  await sleep(60);
  assert.equal(cut.destroyed, false);
  access.refusal = new SwitchboardError('ip_not_allowed');
  await sleep(60);
  assert.equal(cut.destroyed, true, 'cut by default');
  assert.equal(graceful.destroyed, false);
  assert.deepEqual(reasons, ['ip_not_allowed'], 'ended once, through its own hook, saying why');
  assert.equal(other.destroyed, false);
  assert.equal(live.size, 1);
  other.emit('close');
  assert.equal(live.size, 0, 'a finished request is forgotten');
  live.close();
});

test('a request whose ending fails is cut', async () => {
  const live = new LiveRequests(20);
  const broken = new FakeResponse();
  live.track(
    asResponse(broken),
    () => new SwitchboardError('unavailable'),
    () => {
      throw new Error('write after end');
    },
  );
  await sleep(60);
  assert.equal(broken.destroyed, true);
  assert.equal(live.size, 0);
  live.close();
});
