// pnpm bench:browser — one local page, side by side in one run:
//   (a) raw Playwright in one process, a browser launched per session: launch, new page, goto,
//       screenshot, the page as Markdown (page.content() through Turndown with GFM), pdf, close;
//   (b) the same through the gateway: create (warm pool), navigate, capture (stored in S3),
//       content as Markdown, pdf (stored in S3), close.
// Then memory: the proportional set size of the worker's Chromium processes with idle sessions,
// as sessions per GB of RAM. Numbers, not assertions; BENCH_RUNS sets the sample count.
import { readFileSync } from 'node:fs';
import { gfm } from '@joplin/turndown-plugin-gfm';
import { chromium } from 'playwright-core';
import TurndownService from 'turndown';
import { bearer, createKey } from '../support/admin.js';
import { descendants } from '../support/processes.js';
import { startBrowserStack } from '../support/browser-stack.js';
import { sleep } from '../support/stack.js';
import { spawnGateway } from '../support/gateway.js';
import { percentile } from './stats.js';

const runs = Number(process.env.BENCH_RUNS ?? 20);
const idleSessions = Number(process.env.BENCH_IDLE_SESSIONS ?? 6);
const viewport = { width: 1280, height: 720 };
/** What a Playwright user would write for Markdown: the page's HTML through Turndown with GFM. */
const markdownConverter = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' }).use(gfm);

type Steps = Record<string, number>;

async function timed<T>(steps: Steps, name: string, fn: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await fn();
  steps[name] = performance.now() - started;
  return result;
}

function table(name: string, samples: Steps[]) {
  const rows: Record<string, string>[] = [];
  for (const step of Object.keys(samples[0]!)) {
    const values = samples.map((s) => s[step]!);
    rows.push({
      path: name,
      step,
      'p50 ms': percentile(values, 50).toFixed(1),
      'p95 ms': percentile(values, 95).toFixed(1),
    });
  }
  return rows;
}

/** Proportional set size (kB) of every live descendant of `root`, shared pages split fairly. */
function pssOfTree(root: number): number {
  let total = 0;
  for (const pid of descendants(root)) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      total += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return total;
}

const stack = await startBrowserStack({
  workerEnv: { BROWSER_POOL_SIZE: '2', BROWSER_MAX_SESSIONS: String(idleSessions + 2), LOG_LEVEL: 'error' },
  gatewayEnv: { LOG_LEVEL: 'error' },
  // A gateway process of its own, as deployed: what is measured through it is not this process's.
  startGateway: spawnGateway,
});
try {
  const pageUrl = `${stack.site.origin}/form`;
  const key = await createKey(stack.gateway, { tier: 'enterprise', rate_limit_per_minute: 1_000_000 });
  const api = async (path: string, body?: unknown) => {
    const res = await fetch(`${stack.gateway.url}/api/browser${path}`, {
      method: 'POST',
      headers: { ...bearer(key.key), 'content-type': 'application/json' },
      body: JSON.stringify(body ?? {}),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, string>;
  };

  const raw: Steps[] = [];
  const viaGateway: Steps[] = [];
  for (let i = 0; i < runs + 2; i++) {
    const rawSteps: Steps = {};
    const cycle = performance.now();
    const browser = await timed(rawSteps, 'launch', () =>
      chromium.launch({
        executablePath: '/usr/bin/chromium',
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-dev-shm-usage',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--no-first-run',
        ],
      }),
    );
    const page = await timed(rawSteps, 'new page', () => browser.newPage({ viewport }));
    await timed(rawSteps, 'goto', () => page.goto(pageUrl, { waitUntil: 'load' }));
    await timed(rawSteps, 'screenshot', () => page.screenshot({ type: 'png' }));
    await timed(rawSteps, 'markdown', async () => markdownConverter.turndown(await page.content()));
    await timed(rawSteps, 'pdf', () => page.pdf());
    await timed(rawSteps, 'close', () => browser.close());
    rawSteps['whole cycle'] = performance.now() - cycle;

    await sleep(300);
    const gwSteps: Steps = {};
    const gwCycle = performance.now();
    const created = await timed(gwSteps, 'create', () =>
      api('/session/create', { viewport_width: 1280, viewport_height: 720 }),
    );
    await timed(gwSteps, 'navigate', () => api(`/session/${created.session_id}/navigate`, { url: pageUrl }));
    await timed(gwSteps, 'capture', () => api(`/session/${created.session_id}/capture`));
    await timed(gwSteps, 'markdown', () =>
      api(`/session/${created.session_id}/content`, { formats: ['markdown'] }),
    );
    await timed(gwSteps, 'pdf', () => api(`/session/${created.session_id}/pdf`));
    await timed(gwSteps, 'close', () => api(`/session/${created.session_id}/close`));
    gwSteps['whole cycle'] = performance.now() - gwCycle;
    // Let the pool refill (it defers that by 1.5 s) so neither path runs beside a launch.
    await sleep(2_500);
    if (i >= 2) {
      raw.push(rawSteps); // the first two are warm-up
      viaGateway.push(gwSteps);
    }
  }
  console.log(`\nbrowser cycle on ${pageUrl} (${runs} runs, ${viewport.width}x${viewport.height})`);
  console.table([
    ...table('raw Playwright (launch per session)', raw),
    ...table('gateway (warm pool)', viaGateway),
  ]);
  const p50 = (samples: Steps[], step: string) =>
    percentile(
      samples.map((s) => s[step]!),
      50,
    );
  const ratio = (gateway: string, playwright: string) =>
    `${(p50(viaGateway, gateway) / p50(raw, playwright)).toFixed(2)}x`;
  console.log(
    `gateway / raw Playwright (p50): capture ${ratio('capture', 'screenshot')}, ` +
      `markdown ${ratio('markdown', 'markdown')}, pdf ${ratio('pdf', 'pdf')}, ` +
      `whole cycle ${ratio('whole cycle', 'whole cycle')}`,
  );

  // Memory at idle: the worker's process tree with 0 and with N sessions parked on the page.
  const workerPid = stack.workers[0]!.child.pid!;
  await sleep(2000);
  const baseline = pssOfTree(workerPid);
  const ids: string[] = [];
  for (let i = 0; i < idleSessions; i++) {
    const { session_id: id } = await api('/session/create');
    await api(`/session/${id}/navigate`, { url: pageUrl });
    ids.push(id!);
  }
  await sleep(3000);
  const loaded = pssOfTree(workerPid);
  const perSessionMb = (loaded - baseline) / idleSessions / 1024;
  console.log(
    `idle memory: ${idleSessions} sessions add ${((loaded - baseline) / 1024).toFixed(0)} MB PSS ` +
      `(${perSessionMb.toFixed(0)} MB each) → ${(1024 / perSessionMb).toFixed(1)} sessions per GB`,
  );
  for (const id of ids) await api(`/session/${id}/close`);
} finally {
  await stack.stop();
}
