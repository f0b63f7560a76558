// The pool's start-up wait: the first warm browser, with a deadline, without Chromium (launches are
// stand-ins that resolve or fail when the test says).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '@switchboard/telemetry';
import { BrowserPool, NoWarmBrowserError } from './browser-pool.js';
import type { PooledBrowser } from './pooled-browser.js';

const logger = createLogger({ service: 'test', level: 'silent' });

/** A stand-in that never exits until disposed. */
function fakeBrowser(): PooledBrowser {
  let exit!: () => void;
  const exited = new Promise<void>((resolve) => (exit = resolve));
  return {
    isAlive: true,
    exited,
    dispose: async () => exit(),
  } as unknown as PooledBrowser;
}

function pool(launch: () => Promise<PooledBrowser>): BrowserPool {
  return new BrowserPool({ size: 1, maxBrowsers: 2, inUse: () => 0, launch, logger });
}

test('whenWarm resolves once the first launch is warm, and at once after that', async () => {
  let finish!: (browser: PooledBrowser) => void;
  const browsers = pool(() => new Promise((resolve) => (finish = resolve)));
  try {
    const warm = browsers.whenWarm(5_000);
    browsers.fill();
    finish(fakeBrowser());
    await warm;
    assert.equal(browsers.warmCount, 1);
    await browsers.whenWarm(0);
  } finally {
    await browsers.close();
  }
});

test('whenWarm rejects with NoWarmBrowserError when no browser starts in time', async () => {
  const browsers = pool(() => Promise.reject(new Error('chromium: not found')));
  try {
    const warm = browsers.whenWarm(50);
    browsers.fill();
    await assert.rejects(warm, NoWarmBrowserError);
  } finally {
    await browsers.close();
  }
});

test('whenWarm rejects when the pool closes first', async () => {
  let finish!: (browser: PooledBrowser) => void;
  const browsers = pool(() => new Promise((resolve) => (finish = resolve)));
  const warm = browsers.whenWarm(5_000);
  browsers.fill();
  const closing = browsers.close();
  await assert.rejects(warm, /closed/);
  // The launch under way finishes into the closed pool, which disposes of it.
  finish(fakeBrowser());
  await closing;
  assert.equal(browsers.warmCount, 0);
});
