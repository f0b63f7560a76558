import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { admin, bearer } from '../support/admin.js';
import { launchChromium, watchedPage, type WatchedPage } from '../support/chromium-page.js';
import { startLlmStack, until, type ModelStack } from '../support/stack.js';
import { adminUsageAroundToday, untilUsage, type UsageReportView } from '../support/usage.js';

interface QuotaView {
  limit: number;
  period: 'day' | 'month';
}
interface Key {
  id: string;
  name: string;
  quotas?: Record<string, QuotaView | null>;
}
interface QuotaStatus {
  meter: string;
  limit: number;
  period: string;
  source: 'tier' | 'key';
  used: number;
  reserved: number;
  remaining: number;
}
interface OpenApi {
  components: { schemas: { Meter: { enum: string[] } } };
}

/** The page's refusal of a bad quota: the browser notes the 400 answer in the console. */
const refusedQuotaError = /Failed to load resource: the server responded with a status of 400/;

/**
 * The dashboard's usage charts and quotas in Debian's Chromium, against a gateway with a real llm
 * worker (the tiny development Llama) and a real usage store: the usage a key's own calls made is
 * what the charts, totals and quotas show, and quotas edited in the page are what the admin API
 * holds and enforces.
 */
describe('usage and quotas in the admin dashboard', { timeout: 240_000 }, () => {
  let llm: ModelStack;
  let browser: Browser;
  let watched: WatchedPage;
  let page: Page;
  let meters: string[];

  const gateway = () => llm.stack.gateway;
  const adminJson = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await admin(gateway(), method, path, body);
    assert.equal(res.status, 200, `${method} ${path}: ${await res.clone().text()}`);
    return (await res.json()) as T;
  };
  const keyById = (id: string) => adminJson<Key>('GET', `/keys/${id}`);
  const quotaStatus = async (id: string) =>
    (await adminJson<{ data: QuotaStatus[] }>('GET', `/keys/${id}/quotas`)).data;
  const keyRow = (id: string): Locator => page.locator('tbody tr').filter({ hasText: id });
  const usageCard = () => page.locator('#usage-card');
  const editCard = () => page.locator('#edit-card');
  /** The exact numbers behind figures (their data-value), in page order. */
  const dataValues = async (cells: Locator) =>
    Promise.all((await cells.all()).map(async (cell) => Number(await cell.getAttribute('data-value'))));
  const attributes = async (elements: Locator, name: string) =>
    Promise.all((await elements.all()).map((element) => element.getAttribute(name)));

  /** The key's usage report the page asked for last, asked again with the admin token. */
  async function pageReport(): Promise<UsageReportView> {
    const asked = watched.requests.filter((url) => url.includes('/admin/api/usage?')).at(-1);
    assert.ok(asked, 'the page asked for usage');
    const res = await fetch(asked, { headers: bearer(gateway().adminToken) });
    assert.equal(res.status, 200);
    return (await res.json()) as UsageReportView;
  }

  /** What the card's quota table shows, row by row, in the API's fields. */
  async function shownQuotas(): Promise<QuotaStatus[]> {
    const rows = usageCard().locator('tr.quota');
    const shown: QuotaStatus[] = [];
    for (const row of await rows.all()) {
      const cells = row.locator('td');
      const figure = async (name: string) =>
        Number(await row.locator(`td.${name}`).getAttribute('data-value'));
      shown.push({
        meter: (await row.getAttribute('data-meter')) ?? '',
        source: (await cells.nth(1).innerText()) as 'tier' | 'key',
        period: await cells.nth(2).innerText(),
        limit: await figure('limit'),
        used: await figure('used'),
        reserved: await figure('reserved'),
        remaining: await figure('remaining'),
      });
    }
    return shown;
  }
  const byMeter = (data: QuotaStatus[]) => [...data].sort((a, b) => a.meter.localeCompare(b.meter));
  const statusOf = (data: QuotaStatus[]) =>
    data.map(({ meter, source, period, limit, used, reserved, remaining }) => ({
      meter,
      source,
      period,
      limit,
      used,
      reserved,
      remaining,
    }));

  before(async () => {
    // The basic tier gets a monthly request quota, so the page shows a tier's quota and a key can lift it.
    [llm, browser] = await Promise.all([
      startLlmStack({
        gatewayEnv: {
          TIER_POLICIES: JSON.stringify({
            basic: { quotas: { requests: { limit: 1000, period: 'month' } } },
          }),
        },
      }),
      launchChromium(),
    ]);
    watched = await watchedPage(browser, gateway().url);
    page = watched.page;
    meters = ((await (await fetch(`${gateway().url}/openapi.json`)).json()) as OpenApi).components.schemas
      .Meter.enum;
  });
  after(async () => {
    await browser?.close();
    await llm?.stop();
  });

  test('uPlot comes from this gateway, under the same strict policy', async () => {
    const res = await fetch(`${gateway().url}/admin`);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /style-src 'self'(;|$)/, 'no inline style: uPlot styles through the DOM');
    for (const [path, type] of [
      ['/admin/uplot.js', 'text/javascript'],
      ['/admin/uplot.css', 'text/css'],
      ['/admin/usage-charts.js', 'text/javascript'],
    ] as const) {
      const file = await fetch(`${gateway().url}${path}`);
      assert.equal(file.status, 200, path);
      assert.match(file.headers.get('content-type') ?? '', new RegExp(`^${type}`), path);
    }
  });

  let keyId: string;
  let secret: string;
  const hostileName = '<img src=x onerror="window.pwned=1">usage person';

  test('creates a key with a quota of its own', async () => {
    await page.goto(`${gateway().url}/admin`);
    await page.getByLabel('Admin token').fill(gateway().adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();

    await page.getByRole('textbox', { name: 'Name' }).first().fill(hostileName);
    await page.getByRole('button', { name: 'Add quota' }).click();
    await page.getByLabel('Quota meter').selectOption('output_tokens');
    await page.getByLabel('Quota limit').fill('100');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('textbox', { name: 'API key' });
    await shown.waitFor();
    secret = await shown.inputValue();
    keyId = /^sb_(.+)_[^_]+$/.exec(secret)?.[1] ?? '';
    await page.getByRole('button', { name: 'Done' }).click();

    const key = await keyById(keyId);
    assert.equal(key.name, hostileName);
    assert.deepEqual(key.quotas, { output_tokens: { limit: 100, period: 'day' } });
    await keyRow(keyId).getByText('output_tokens 100 / day').waitFor();
    assert.equal(await page.getByLabel('Quota meter').count(), 0, 'the create form is empty again');
  });

  test("charts the key's own calls: series, totals and every bucket as the admin API reports them", async () => {
    const usages: { prompt_tokens: number; completion_tokens: number }[] = [];
    for (const [prompt, max_tokens] of [
      ['Once upon a time', 7],
      ['A longer prompt than the first one', 5],
    ] as const) {
      const res = await fetch(`${gateway().url}/query`, {
        method: 'POST',
        headers: { ...bearer(secret), 'content-type': 'application/json' },
        body: JSON.stringify({ prompt, max_tokens, temperature: 0 }),
      });
      assert.equal(res.status, 200, await res.clone().text());
      usages.push(((await res.json()) as { usage: (typeof usages)[number] }).usage);
    }
    const model = llm.repo.modelId;
    const outputTokens = usages.reduce((sum, u) => sum + u.completion_tokens, 0);
    const inputTokens = usages.reduce((sum, u) => sum + u.prompt_tokens, 0);
    await untilUsage(
      () => adminUsageAroundToday(gateway(), keyId),
      (seen) => seen[`llm/${model}/output_tokens`] === outputTokens && seen[`llm/${model}/requests`] === 2,
      'both calls',
    );

    await keyRow(keyId).getByRole('button', { name: 'Usage' }).click();
    await usageCard().locator('figure.chart canvas').first().waitFor();
    // The name is text, never markup.
    assert.ok((await usageCard().getByRole('heading').first().innerText()).includes(hostileName));
    assert.equal(await page.evaluate('window.pwned'), undefined);

    for (const range of ['7d', '24h'] as const) {
      await usageCard().getByLabel('Range').selectOption(range);
      const buckets = range === '24h' ? 24 : 7;
      const expectedCharts = meters.filter((m) => ['requests', 'input_tokens', 'output_tokens'].includes(m));
      const rows = expectedCharts.length * buckets;
      await until(
        async () => (await usageCard().locator('figure.chart tr.bucket').count()) === rows,
        `${rows} bucket rows`,
      );
      const report = await pageReport();
      assert.equal(report.bucket, range === '24h' ? 'hour' : 'day');
      assert.equal(report.data.length, buckets, `${range}: every bucket, empty ones too`);
      const charts = usageCard().locator('figure.chart');
      assert.deepEqual(
        await attributes(charts, 'data-meter'),
        expectedCharts,
        'a chart per meter used, in the catalogue order',
      );
      for (const meter of expectedCharts) {
        const chart = usageCard().locator(`figure.chart[data-meter="${meter}"]`);
        assert.deepEqual(await chart.locator('.u-legend .u-label').allInnerTexts(), [
          'bucket',
          `llm · ${model}`,
        ]);
        const values = report.data.map((bucket) =>
          bucket.results.filter((r) => r.meter === meter).reduce((sum, r) => sum + r.value, 0),
        );
        assert.deepEqual(
          await dataValues(chart.locator('tr.bucket td[data-value]')),
          values,
          `${range} ${meter}`,
        );
        // Both calls were made just now: one bucket holds them (two if an hour turned between).
        assert.ok(values.filter((v) => v === 0).length >= buckets - 2, 'the empty buckets are zero');
      }
      const expectedTotals: Record<string, number> = {
        requests: 2,
        input_tokens: inputTokens,
        output_tokens: outputTokens,
      };
      assert.deepEqual(
        await dataValues(usageCard().locator('tr.usage-total td.total')),
        expectedCharts.map((meter) => expectedTotals[meter]),
      );
    }

    // The key's own quota with what is left, as the admin API counts it.
    const status = await quotaStatus(keyId);
    assert.deepEqual(byMeter(statusOf(status)), [
      {
        meter: 'output_tokens',
        source: 'key',
        period: 'day',
        limit: 100,
        used: outputTokens,
        reserved: 0,
        remaining: 100 - outputTokens,
      },
      {
        meter: 'requests',
        source: 'tier',
        period: 'month',
        limit: 1000,
        used: 2,
        reserved: 0,
        remaining: 998,
      },
    ]);
    assert.deepEqual(
      byMeter(await shownQuotas()),
      byMeter(statusOf(status)),
      'the "left" figures are the API\'s',
    );
  });

  test("edits quotas in the key's form: change, lift the tier's, reset to the tier", async () => {
    await keyRow(keyId).getByRole('button', { name: 'Edit' }).click();
    const form = editCard();
    // A limit the API refuses: its message shows, nothing changes.
    await form.getByLabel('Quota limit').fill('-5');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.locator('.notice.error').filter({ hasText: 'quotas.output_tokens.limit' }).waitFor();
    assert.deepEqual((await keyById(keyId)).quotas, { output_tokens: { limit: 100, period: 'day' } });

    // Change the key's quota, lift the tier's request quota.
    await form.getByLabel('Quota limit').fill('20');
    await form.getByLabel('Quota period').selectOption('month');
    await form.getByRole('button', { name: 'Add quota' }).click();
    await form.getByLabel('Quota meter').nth(1).selectOption('requests');
    await form.getByLabel('Quota kind').nth(1).selectOption('none');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    assert.deepEqual((await keyById(keyId)).quotas, {
      output_tokens: { limit: 20, period: 'month' },
      requests: null,
    });
    let status = await quotaStatus(keyId);
    assert.deepEqual(
      status.map((q) => q.meter),
      ['output_tokens'],
      "the tier's request quota is lifted for this key",
    );
    await usageCard().locator('tr.quota[data-meter="requests"]').waitFor({ state: 'detached' });
    await usageCard().locator('tr.quota[data-meter="output_tokens"] td.limit[data-value="20"]').waitFor();
    assert.deepEqual(await shownQuotas(), statusOf(status), 'the "left" figure is the API\'s');
    assert.equal(status[0]!.remaining, Math.max(0, 20 - status[0]!.used));

    // Reset both to the tier: the key has no quotas of its own, the tier's request quota is back.
    await keyRow(keyId).getByRole('button', { name: 'Edit' }).click();
    const rowMeters = async () =>
      Promise.all((await form.getByLabel('Quota meter').all()).map((select) => select.inputValue()));
    const [first, second] = await rowMeters();
    assert.deepEqual([first, second].sort(), ['output_tokens', 'requests']);
    await form.getByRole('button', { name: 'Reset to tier' }).first().click();
    assert.deepEqual(await rowMeters(), [second], 'the row left is the other one, as it was');
    assert.equal(await form.getByLabel('Quota kind').inputValue(), second === 'requests' ? 'none' : 'limit');
    await form.getByRole('button', { name: 'Reset to tier' }).click();
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    assert.deepEqual((await keyById(keyId)).quotas ?? {}, {});
    status = await quotaStatus(keyId);
    assert.deepEqual(
      status.map((q) => [q.meter, q.source]),
      [['requests', 'tier']],
    );
    await usageCard().locator('tr.quota[data-meter="output_tokens"]').waitFor({ state: 'detached' });
    assert.deepEqual(await shownQuotas(), statusOf(status));
    await keyRow(keyId).getByText("tier's").waitFor();
  });

  test('a quota the page set is the one the gateway enforces', async () => {
    await keyRow(keyId).getByRole('button', { name: 'Edit' }).click();
    await editCard().getByRole('button', { name: 'Add quota' }).click();
    await editCard().getByLabel('Quota meter').selectOption('requests');
    await editCard().getByLabel('Quota limit').fill('2');
    await editCard().getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    await usageCard().locator('tr.quota[data-meter="requests"] td.remaining[data-value="0"]').waitFor();

    const refused = await fetch(`${gateway().url}/query`, {
      method: 'POST',
      headers: { ...bearer(secret), 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'One more', max_tokens: 2 }),
    });
    assert.equal(refused.status, 429);
    const error = ((await refused.json()) as { error: { code: string; param?: string } }).error;
    assert.deepEqual([error.code, error.param], ['quota_exceeded', 'requests']);
  });

  test('nothing went wrong in the console but the refusal asked for', () => {
    assert.deepEqual(watched.problems([refusedQuotaError]), []);
  });
});
