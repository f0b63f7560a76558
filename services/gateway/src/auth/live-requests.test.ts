import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { Response } from 'express';
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

test('requests whose key stops authenticating are ended at the next sweep; others stay', async () => {
  const live = new LiveRequests(20);
  let revoked = false;
  const cut = new FakeResponse();
  const graceful = new FakeResponse();
  const other = new FakeResponse();
  let endedGracefully = 0;
  live.track(asResponse(cut), () => !revoked);
  live.track(
    asResponse(graceful),
    () => !revoked,
    () => (endedGracefully += 1),
  );
  live.track(asResponse(other), () => true);
  await sleep(60);
  assert.equal(cut.destroyed, false);
  revoked = true;
  await sleep(60);
  assert.equal(cut.destroyed, true, 'cut by default');
  assert.equal(graceful.destroyed, false);
  assert.equal(endedGracefully, 1, 'ended once, through its own hook');
  assert.equal(other.destroyed, false);
  assert.equal(live.size, 1);
  other.emit('close');
  assert.equal(live.size, 0, 'a finished request is forgotten');
  live.close();
});
