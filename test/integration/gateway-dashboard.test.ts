import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { admin, bearer } from '../support/admin.js';
import { startBrowserStack, type BrowserStack } from '../support/browser-stack.js';
import { launchChromium, watchedPage, type WatchedPage } from '../support/chromium-page.js';

interface Key {
  id: string;
  name: string;
  tier: string;
  ip_allowlist: string[];
  status: string;
}
interface Status {
  workers: {
    name: string;
    status: string;
    replicas: { address: string; status: string; in_flight: number; served: number }[];
  }[];
  browser_sessions: { session_id: string; status: string; owner_key_id: string }[] | null;
}

/** What a refused admin token leaves in the console: the browser's note about the 401 response. */
const refusedTokenError = /Failed to load resource: the server responded with a status of 401/;

/**
 * GET /admin in Debian's Chromium, used as a person uses it, against a gateway with a real
 * browser worker behind it. After every step the admin API says whether it really happened.
 */
describe('the admin dashboard in Chromium', { timeout: 240_000 }, () => {
  let stack: BrowserStack;
  let browser: Browser;
  let watched: WatchedPage;
  let page: Page;

  const adminJson = async <T>(method: string, path: string): Promise<T> => {
    const res = await admin(stack.gateway, method, path);
    assert.equal(res.status, 200, `${method} ${path}`);
    return (await res.json()) as T;
  };
  const keyById = (id: string) => adminJson<Key>('GET', `/keys/${id}`);
  const status = () => adminJson<Status>('GET', '/status');
  /** An authenticated public call with `key`: 401 once the key is refused. */
  const models = async (key: string) =>
    (await fetch(`${stack.gateway.url}/models`, { headers: bearer(key) })).status;
  const keyRow = (id: string): Locator => page.locator('tbody tr').filter({ hasText: id });
  const secretShown = () => page.getByRole('textbox', { name: 'API key' });
  /** The one dialog the next action opens: accepted (with `answer` for a prompt) or dismissed. */
  const nextDialog = (answer: string | false) =>
    page.once('dialog', (dialog) => void (answer === false ? dialog.dismiss() : dialog.accept(answer)));

  before(async () => {
    [stack, browser] = await Promise.all([startBrowserStack(), launchChromium()]);
    watched = await watchedPage(browser, stack.gateway.url, {
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    page = watched.page;
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  test('the page runs only its own files under a strict CSP', async () => {
    const res = await fetch(`${stack.gateway.url}/admin`);
    assert.equal(res.status, 200);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /style-src 'self'(;|$)/, 'no inline style either');
    assert.match(csp, /connect-src 'self'(;|$)/);
    assert.doesNotMatch(await res.text(), /<script>|<style>|\son\w+=/i, 'nothing inline');
  });

  let keyId: string;
  let secret: string;
  let sessionId: string;

  test('signs in: a wrong token is refused, the right one is kept in this tab only', async () => {
    await page.goto(`${stack.gateway.url}/admin`);
    await page.getByLabel('Admin token').fill('not-the-admin-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The admin token was refused.' }).waitFor();
    assert.equal(await page.getByRole('heading', { name: 'API keys' }).count(), 0, 'still signed out');
    assert.equal(watched.problems().length, 1, 'the refused call is the only problem');
    assert.match(watched.problems()[0]!, refusedTokenError);

    await page.getByLabel('Admin token').fill(stack.gateway.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    assert.equal(
      await page.evaluate('sessionStorage.getItem("switchboard.adminToken")'),
      stack.gateway.adminToken,
    );
    assert.equal(await page.evaluate('localStorage.length'), 0, 'nothing outlives the tab');
  });

  test('creates a key: its secret is shown once, copied to the clipboard, gone after a reload', async () => {
    await page.getByRole('textbox', { name: 'Name' }).first().fill('dashboard person');
    await page.getByRole('combobox', { name: /^Tier/ }).selectOption('professional');
    await page.getByRole('button', { name: 'Create key' }).click();
    await secretShown().waitFor();
    secret = await secretShown().inputValue();
    keyId = /^sb_(.+)_[^_]+$/.exec(secret)?.[1] ?? '';
    assert.ok(keyId, `a key of the sb_<id>_<secret> form: ${secret}`);

    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret);

    const key = await keyById(keyId);
    assert.deepEqual([key.name, key.tier, key.status], ['dashboard person', 'professional', 'active']);
    assert.equal(await models(secret), 200, 'the shown secret is the key');
    await keyRow(keyId).getByText('professional').waitFor();

    await page.reload();
    await keyRow(keyId).waitFor();
    assert.equal(await secretShown().count(), 0, 'no secret after a reload');
    assert.ok(!(await page.content()).includes(secret.slice(-12)), 'the secret is nowhere in the page');
  });

  test('edits the tier and the IP allowlist', async () => {
    await keyRow(keyId).getByRole('button', { name: 'Edit' }).click();
    const form = page.locator('#edit-card');
    await form.getByRole('combobox', { name: /^Tier/ }).selectOption('enterprise');
    await form.getByLabel(/IP allowlist/).fill('127.0.0.1/32, 10.0.0.0/8');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved "dashboard person".' }).waitFor();

    const key = await keyById(keyId);
    assert.equal(key.tier, 'enterprise');
    assert.deepEqual(key.ip_allowlist, ['127.0.0.1/32', '10.0.0.0/8']);
    await keyRow(keyId).getByText('enterprise').waitFor();
    assert.equal(await models(secret), 200, 'this test runs from 127.0.0.1, which the list allows');
  });

  test("sees workers' health and a live browser session, and force-closes it after confirming", async () => {
    const created = await fetch(`${stack.gateway.url}/api/browser/session/create`, {
      method: 'POST',
      headers: { ...bearer(secret), 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(created.status, 201, await created.clone().text());
    sessionId = ((await created.json()) as { session_id: string }).session_id;

    await page.getByRole('button', { name: 'Refresh' }).last().click();
    const sessionRow = page.locator('tbody tr').filter({ hasText: sessionId });
    await sessionRow.getByText('active').waitFor();
    await sessionRow.getByText(keyId).waitFor();

    // Workers: the browser worker serves, the others are not running in this stack.
    const workers = (await status()).workers;
    for (const worker of workers) {
      const row = page
        .locator('tbody tr')
        .filter({ has: page.getByRole('cell', { name: worker.name, exact: true }) });
      await row.getByText(worker.status, { exact: true }).waitFor();
    }
    assert.equal(workers.find((w) => w.name === 'browser')?.status, 'SERVING');
    assert.equal(workers.find((w) => w.name === 'llm')?.status, 'UNREACHABLE');
    // Under each model worker, a row per replica: its address, health and call counts.
    assert.deepEqual(
      workers.filter((w) => w.replicas.length > 0).map((w) => w.name),
      ['llm', 'whisper', 'diffusion'],
    );
    for (const worker of workers) {
      for (const replica of worker.replicas) {
        const row = page
          .locator(`tbody tr.replica[data-worker="${worker.name}"]`)
          .filter({ hasText: replica.address });
        await row.getByText(replica.status, { exact: true }).waitFor();
        assert.deepEqual(await row.locator('td').allInnerTexts(), [
          'replica',
          replica.address,
          replica.status,
          String(replica.in_flight),
          String(replica.served),
        ]);
      }
    }

    // Dismissing the confirmation closes nothing.
    nextDialog(false);
    await sessionRow.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'Refresh' }).last().click();
    const stillOpen = (await status()).browser_sessions?.find((s) => s.session_id === sessionId);
    assert.equal(stillOpen?.status, 'active');

    nextDialog('');
    await sessionRow.getByRole('button', { name: 'Close' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Closed browser session ${sessionId}.` })
      .waitFor();
    await sessionRow.getByText('closed').waitFor();
    const details = await fetch(`${stack.gateway.url}/api/browser/session/${sessionId}/details`, {
      headers: bearer(secret),
    });
    assert.equal(((await details.json()) as { status: string }).status, 'closed', 'closed for its owner too');
  });

  test('rotates with a grace period: both secrets work', async () => {
    nextDialog('300');
    await keyRow(keyId).getByRole('button', { name: 'Rotate' }).click();
    await page.getByRole('heading', { name: /the old key works for 300 s more/ }).waitFor();
    const rotated = await secretShown().inputValue();
    assert.notEqual(rotated, secret);
    assert.ok(rotated.startsWith(`sb_${keyId}_`), 'the key id stays');
    assert.equal(await models(rotated), 200, 'the new secret works at once');
    assert.equal(await models(secret), 200, 'the old one during the grace period');
    await page.getByRole('button', { name: 'Done' }).click();
    assert.equal(await secretShown().count(), 0);
    secret = rotated;
  });

  test('revokes only after confirming', async () => {
    nextDialog(false);
    await keyRow(keyId).getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('button', { name: 'Refresh' }).first().click();
    assert.equal((await keyById(keyId)).status, 'active', 'dismissed: still active');
    assert.equal(await models(secret), 200);

    nextDialog('');
    await keyRow(keyId).getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('status').filter({ hasText: 'Revoked "dashboard person".' }).waitFor();
    assert.equal((await keyById(keyId)).status, 'revoked');
    await keyRow(keyId).getByText('revoked').waitFor();
    assert.ok(await keyRow(keyId).getByRole('button', { name: 'Revoke' }).isDisabled());
  });

  test('signs out, forgetting the token; nothing went wrong in the console along the way', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    assert.equal(await page.evaluate('sessionStorage.length'), 0);
    assert.deepEqual(watched.problems([refusedTokenError]), []);
  });
});
