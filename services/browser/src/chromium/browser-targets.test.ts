import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { CDPSession } from 'playwright-core';
import { createLogger } from '@switchboard/telemetry';
import { BrowserTargets } from './browser-targets.js';

const logger = createLogger({ service: 'targets-test', level: 'silent' });

/** The browser-level CDP session as the watch sees it: events in, commands recorded. */
class FakeBrowserSession extends EventEmitter {
  readonly sent: { method: string; params: unknown }[] = [];
  send(method: string, params: unknown): Promise<unknown> {
    this.sent.push({ method, params });
    return Promise.resolve({});
  }
  page(targetId: string, extra: Record<string, unknown> = {}): void {
    this.emit('Target.targetCreated', {
      targetInfo: { targetId, type: 'page', url: 'about:blank', ...extra },
    });
  }
}

async function watch(maxTabs: number) {
  const cdp = new FakeBrowserSession();
  const targets = await BrowserTargets.watch(cdp as unknown as CDPSession, maxTabs, logger);
  return { cdp, targets };
}

test('discovery starts at once; pages count as tabs, Chromium WebUI pages and workers do not', async () => {
  const { cdp, targets } = await watch(3);
  assert.deepEqual(cdp.sent[0], { method: 'Target.setDiscoverTargets', params: { discover: true } });
  cdp.page('own');
  cdp.page('omnibox', { url: 'chrome://omnibox-popup.top-chrome/' });
  cdp.emit('Target.targetCreated', { targetInfo: { targetId: 'ui', type: 'browser_ui', url: '' } });
  cdp.emit('Target.targetCreated', { targetInfo: { targetId: 'w', type: 'worker', url: 'http://x/' } });
  assert.equal(targets.openTabs, 1);
  cdp.emit('Target.targetDestroyed', { targetId: 'own' });
  assert.equal(targets.openTabs, 0);
});

test('reservations hold places until answered; an answered create counts before its event', async () => {
  const { cdp, targets } = await watch(3);
  cdp.page('own');
  const first = targets.reserveTab();
  const second = targets.reserveTab();
  assert.ok(first && second);
  assert.equal(targets.reserveTab(), null, 'own page + two pending = the bound');
  first('created-1');
  assert.equal(targets.openTabs, 2);
  cdp.page('created-1'); // its event, late: still one tab
  assert.equal(targets.openTabs, 2);
  second(); // failed create: the place is free again
  second(); // twice is once
  assert.ok(targets.reserveTab());
});

test('a tab a page opens past the bound is closed at once; one within it stays', async () => {
  const { cdp, targets } = await watch(2);
  cdp.page('own');
  cdp.page('popup-1', { openerId: 'own' });
  assert.equal(targets.openTabs, 2);
  assert.equal(cdp.sent.filter((c) => c.method === 'Target.closeTarget').length, 0);
  cdp.page('popup-2', { openerId: 'own' });
  assert.deepEqual(cdp.sent.at(-1), { method: 'Target.closeTarget', params: { targetId: 'popup-2' } });
  // A tab created over DevTools (no opener) had its place reserved; it is never closed here.
  cdp.emit('Target.targetDestroyed', { targetId: 'popup-2' });
  cdp.page('devtools-tab');
  assert.equal(cdp.sent.filter((c) => c.method === 'Target.closeTarget').length, 1);
});

test('a closed tab named late by its answer is not counted again; crashes are reported', async () => {
  const { cdp, targets } = await watch(5);
  const release = targets.reserveTab()!;
  cdp.page('gone');
  cdp.emit('Target.targetDestroyed', { targetId: 'gone' });
  release('gone');
  assert.equal(targets.openTabs, 0);
  const crashed: string[] = [];
  targets.onCrashed = (id) => crashed.push(id);
  cdp.emit('Target.targetCrashed', { targetId: 'x', status: 'crashed', errorCode: 5 });
  assert.deepEqual(crashed, ['x']);
});
