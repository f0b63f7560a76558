import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { createKey } from '../support/admin.js';
import { launchChromium, watchedPage, type WatchedPage } from '../support/chromium-page.js';
import { startStack, type Stack } from '../support/stack.js';
import {
  registerEndpoint,
  sendTestEvent,
  webhookSettings,
  webhooksCall,
  type CreatedEndpoint,
} from '../support/webhooks.js';

// A key's webhook endpoints in the admin dashboard, in Debian's Chromium against a gateway with a
// real webhook store: what an operator sees on the key's card is what the store holds (both
// endpoints, one disabled with its reason, a test delivery waiting for a sender), and never a
// signing secret. No sender runs, so the delivery stays pending.

let stack: Stack;
let browser: Browser;
let watched: WatchedPage;
let page: Page;
let keyId: string;
let enabled: CreatedEndpoint;
let disabled: CreatedEndpoint;

before(async () => {
  const settings = await webhookSettings({ allowedHosts: '127.0.0.1' });
  [stack, browser] = await Promise.all([startStack({ env: settings.gatewayEnv }), launchChromium()]);
  const key = await createKey(stack.gateway, { tier: 'basic' });
  keyId = key.id;
  enabled = await registerEndpoint(stack.gateway, key.key, {
    url: 'http://127.0.0.1:9/enabled',
    events: ['animate.job.*'],
    description: 'jobs',
  });
  disabled = await registerEndpoint(stack.gateway, key.key, { url: 'http://127.0.0.1:9/disabled' });
  const patched = await webhooksCall(stack.gateway, key.key, 'PATCH', `/${disabled.id}`, {
    status: 'disabled',
  });
  assert.equal(patched.status, 200, await patched.clone().text());
  await sendTestEvent(stack.gateway, key.key, enabled.id);
  watched = await watchedPage(browser, stack.gateway.url);
  page = watched.page;
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

const card = (id: string): Locator => page.locator(`div.webhook[data-endpoint="${id}"]`);

test("a key's card lists its endpoints, their state and their recent deliveries, never a secret", async () => {
  await page.goto(`${stack.gateway.url}/admin`);
  await page.getByLabel('Admin token').fill(stack.gateway.adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('tbody tr').filter({ hasText: keyId }).getByRole('button', { name: 'Edit' }).click();

  await card(enabled.id).waitFor();
  const first = card(enabled.id);
  assert.match(await first.innerText(), /enabled/);
  assert.match(await first.innerText(), /http:\/\/127\.0\.0\.1:9\/enabled/);
  assert.match(await first.innerText(), /animate\.job\.\*/);
  const delivery = first.locator('tr.delivery');
  assert.equal(await delivery.count(), 1);
  assert.equal(await delivery.getAttribute('data-status'), 'pending');
  assert.match(await delivery.innerText(), /webhook\.test/);

  const second = card(disabled.id);
  assert.match(await second.innerText(), /disabled/);
  assert.match(await second.innerText(), /\(owner\)/, 'the reason it is disabled');
  assert.equal(await second.locator('tr.delivery').count(), 0);

  const everything = await page.content();
  for (const secret of [enabled.secret, disabled.secret]) assert.ok(!everything.includes(secret));
  assert.doesNotMatch(everything, /whsec_/);
  assert.deepEqual(watched.problems(), []);
});
