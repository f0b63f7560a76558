import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort, startCluster } from '@switchboard/devcluster';
import { makeAudioFixtures } from '../support/audio.js';
import { repoRoot } from '../support/gateway.js';
import {
  alertMeasuredQueries,
  dashboardQueries,
  kedaQueries,
  type ShippedQuery,
} from '../support/observability-queries.js';
import { startTestSite } from '../support/test-site.js';
import { localClusterEnv } from '../support/local-cluster-env.js';

// The chart's dashboard, alerts and KEDA triggers asked of a real Prometheus: the local runner's
// own (SWITCHBOARD_PROMETHEUS=1), scraping a cluster that has served a little of everything. A
// query that errors or finds no series is a panel that shows nothing, an alert that can never fire
// or a trigger that never scales.

/** How long series may take to appear: rate() over a counter needs two scrapes (2 s apart here). */
const DATA_DEADLINE_MS = 60_000;

interface QueryAnswer {
  status: string;
  error?: string;
  data?: { resultType: string; result: unknown[] };
}

async function ask(prometheusUrl: string, expr: string): Promise<QueryAnswer> {
  const res = await fetch(`${prometheusUrl}/api/v1/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ query: expr }),
  });
  return (await res.json()) as QueryAnswer;
}

/** What is wrong with a query's answer, or undefined when it found at least one series. */
function problem(answer: QueryAnswer): string | undefined {
  if (answer.status !== 'success') return `error: ${answer.error ?? JSON.stringify(answer)}`;
  const result = answer.data?.result ?? [];
  // A scalar or string answer is one value; vectors and matrices need a series.
  if (answer.data?.resultType === 'scalar' || answer.data?.resultType === 'string') return undefined;
  return result.length > 0 ? undefined : 'no series';
}

/** Asks every query until each has data or the deadline passes; returns what is still wrong. */
async function unanswered(prometheusUrl: string, queries: readonly ShippedQuery[]): Promise<string[]> {
  let pending = queries;
  const wrong = new Map<ShippedQuery, string>();
  const deadline = Date.now() + DATA_DEADLINE_MS;
  for (;;) {
    wrong.clear();
    for (const query of pending) {
      const why = problem(await ask(prometheusUrl, query.query));
      if (why !== undefined) wrong.set(query, why);
    }
    pending = [...wrong.keys()];
    // An error is a broken query, not missing data: no point waiting for it.
    const onlyErrors = [...wrong.values()].every((why) => why.startsWith('error'));
    if (pending.length === 0 || onlyErrors || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return [...wrong].map(([query, why]) => `${query.source}: ${why}\n    ${query.query}`);
}

interface Targets {
  data: { activeTargets: { labels: Record<string, string>; health: string; lastError: string }[] };
}

interface Rules {
  data: { groups: { name: string; rules: { name: string; health: string; lastError?: string }[] }[] };
}

async function json<T>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  assert.equal(res.status, status, `${res.url}: ${text}`);
  return JSON.parse(text) as T;
}

/** A little of every capability through the gateway, as a client would call it. */
async function driveTraffic(base: string, adminToken: string, siteOrigin: string): Promise<void> {
  const { key } = await json<{ key: string }>(
    await fetch(`${base}/admin/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'prometheus', tier: 'enterprise' }),
    }),
    201,
  );
  const auth = { authorization: `Bearer ${key}` };
  const post = (path: string, body: unknown) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  // A streamed completion, read to its end.
  const stream = await post('/query', { prompt: 'Once upon a time', max_tokens: 8, stream: true });
  assert.equal(stream.status, 200, await stream.clone().text());
  assert.match(await stream.text(), /data: \[DONE\]/);

  const audio = await makeAudioFixtures(3);
  try {
    const form = new FormData();
    form.append('file', new Blob([audio.long]), 'speech.wav');
    const transcribed = await fetch(`${base}/transcribe`, { method: 'POST', headers: auth, body: form });
    assert.equal(transcribed.status, 200, await transcribed.text());
  } finally {
    await audio.remove();
  }

  const { url: imageUrl } = await json<{ url: string }>(
    await post('/generate-image', { prompt: 'a lighthouse', width: 64, height: 64, steps: 2 }),
    200,
  );
  const png = Buffer.from(await (await fetch(`${base}${imageUrl}`, { headers: auth })).arrayBuffer());

  const { job_id: jobId } = await json<{ job_id: string }>(
    await post('/animate', {
      backend: 'video-diffusion',
      image: `data:image/png;base64,${png.toString('base64')}`,
      fps: 8,
      duration_s: 1,
    }),
    202,
  );
  let job: { status: string };
  const until = Date.now() + 60_000;
  do {
    await new Promise((resolve) => setTimeout(resolve, 200));
    job = await json(await fetch(`${base}/animate/${jobId}`, { headers: auth }), 200);
  } while (!['succeeded', 'failed', 'canceled'].includes(job.status) && Date.now() < until);
  assert.equal(job.status, 'succeeded', JSON.stringify(job));

  const { session_id: id } = await json<{ session_id: string }>(
    await post('/api/browser/session/create', {}),
    201,
  );
  await json(await post(`/api/browser/session/${id}/navigate`, { url: `${siteOrigin}/form` }), 200);
  await json(await post(`/api/browser/session/${id}/capture`, {}), 200);
  await json(await post(`/api/browser/session/${id}/close`, {}), 200);
}

test(
  'every dashboard panel, alert and KEDA trigger query finds series in the local Prometheus after a little traffic',
  { timeout: 180_000 },
  async (t) => {
    const site = await startTestSite();
    const stateDir = mkdtempSync(join(tmpdir(), 'sb-prometheus-'));
    t.after(async () => {
      await site.stop();
      rmSync(stateDir, { recursive: true, force: true });
    });
    const cluster = await startCluster({
      root: repoRoot,
      env: localClusterEnv(stateDir, await freePort(), {
        BROWSER_ALLOWED_HOSTS: site.host,
        SWITCHBOARD_PROMETHEUS: '1',
      }),
    });
    t.after(() => cluster.stop());
    const prometheusUrl = cluster.prometheusUrl;
    assert.ok(prometheusUrl, 'SWITCHBOARD_PROMETHEUS=1 starts a Prometheus');
    assert.notEqual(new URL(prometheusUrl).port, '9090', 'the runner’s own Prometheus, never the system one');
    assert.deepEqual(cluster.workers, ['llm', 'whisper', 'diffusion', 'animation', 'browser', 'webhooks']);

    await driveTraffic(cluster.gatewayUrl, cluster.adminToken, site.origin);

    // Every process is a target, labelled as its pod, and up: Prometheus reads the targets file
    // within seconds and scrapes every 2 s, so the first look may be early.
    const expectedPods = [
      'animation-0',
      'browser-0',
      'diffusion-0',
      'gateway-0',
      'llm-0',
      'prometheus-0',
      'webhooks-0',
      'whisper-0',
    ];
    const targetDeadline = Date.now() + 30_000;
    for (;;) {
      const { data } = await json<Targets>(await fetch(`${prometheusUrl}/api/v1/targets?state=active`), 200);
      const pods = data.activeTargets.map((target) => target.labels.pod).sort();
      const down = data.activeTargets.filter((target) => target.health !== 'up');
      const elsewhere = data.activeTargets.filter((target) => target.labels.namespace !== 'switchboard');
      if (
        JSON.stringify(pods) === JSON.stringify(expectedPods) &&
        down.length === 0 &&
        elsewhere.length === 0
      )
        break;
      assert.ok(
        Date.now() < targetDeadline,
        `targets: ${JSON.stringify(pods)}, want ${JSON.stringify(expectedPods)}; not up: ` +
          down.map((d) => `${d.labels.pod} (${d.health}: ${d.lastError})`).join(', ') +
          `; outside the namespace: ${elsewhere.map((d) => d.labels.pod).join(', ')}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
    }

    // The chart's alert rules are loaded and evaluate without errors.
    const { data: rules } = await json<Rules>(await fetch(`${prometheusUrl}/api/v1/rules`), 200);
    assert.ok(rules.groups.length > 0, 'the chart’s alert rule groups are loaded');
    const ruleDeadline = Date.now() + 20_000;
    for (;;) {
      const { data } = await json<Rules>(await fetch(`${prometheusUrl}/api/v1/rules`), 200);
      const unhealthy = data.groups.flatMap((group) =>
        group.rules
          .filter((rule) => rule.health !== 'ok')
          .map((rule) => `${group.name}/${rule.name}: ${rule.health} ${rule.lastError ?? ''}`),
      );
      if (unhealthy.length === 0) break;
      assert.ok(Date.now() < ruleDeadline, `rules not healthy:\n${unhealthy.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }

    const shipped = {
      dashboard: dashboardQueries(),
      alert: alertMeasuredQueries(),
      keda: kedaQueries('switchboard'),
    };
    for (const [kind, list] of Object.entries(shipped))
      assert.ok(list.length > 0, `the chart has ${kind} queries`);
    const queries = Object.values(shipped).flat();
    const wrong = await unanswered(prometheusUrl, queries);
    assert.deepEqual(wrong, [], `${wrong.length} of ${queries.length} queries failed:\n${wrong.join('\n')}`);

    // Every metric a process exports is in docs/metrics.md, with its meaning.
    const exported = await ask(
      prometheusUrl,
      'count by (__name__) ({namespace="switchboard", pod!="prometheus-0"})',
    );
    const names = (exported.data?.result as { metric: { __name__: string } }[]).map((r) => r.metric.__name__);
    assert.ok(names.includes('llm_tokens_generated_total'), JSON.stringify(names));
    const documented = readFileSync(join(repoRoot, 'docs/metrics.md'), 'utf8');
    const undocumented = [
      ...new Set(
        names
          // Prometheus's own series (per target, and alert states) and the runtime's default metrics
          // (documented as a family).
          .filter((name) => !/^(up|scrape_.*|process_.*|nodejs_.*|ALERTS|ALERTS_FOR_STATE)$/.test(name))
          .map((name) => name.replace(/_(bucket|sum|count)$/, ''))
          .filter((name) => !documented.includes(`\`${name}\``)),
      ),
    ];
    assert.deepEqual(undocumented, [], 'metrics missing from docs/metrics.md');
  },
);

/** The pod labels of the active targets, once they equal `want` (or what they were at the deadline). */
async function podsOnceEqual(prometheusUrl: string, want: readonly string[]): Promise<string[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { data } = await json<Targets>(await fetch(`${prometheusUrl}/api/v1/targets?state=active`), 200);
    const pods = data.activeTargets.map((target) => target.labels.pod ?? '').sort();
    if (JSON.stringify(pods) === JSON.stringify(want) || Date.now() > deadline) return pods;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

test(
  'replicas added and removed at run time become and stop being Prometheus targets, without a restart',
  { timeout: 120_000 },
  async (t) => {
    const stateDir = mkdtempSync(join(tmpdir(), 'sb-prometheus-replicas-'));
    t.after(() => rmSync(stateDir, { recursive: true, force: true }));
    const cluster = await startCluster({
      root: repoRoot,
      workers: ['llm'],
      env: {
        PATH: process.env.PATH ?? '',
        SWITCHBOARD_STATE_DIR: stateDir,
        GATEWAY_PORT: String(await freePort()),
        LOG_LEVEL: 'warn',
        SWITCHBOARD_REPLICAS: 'llm=1',
        SWITCHBOARD_PROMETHEUS: '1',
      },
    });
    t.after(() => cluster.stop());
    const prometheusUrl = cluster.prometheusUrl!;
    assert.deepEqual(await podsOnceEqual(prometheusUrl, ['gateway-0', 'llm-1', 'prometheus-0']), [
      'gateway-0',
      'llm-1',
      'prometheus-0',
    ]);

    await cluster.addReplica('llm');
    assert.deepEqual(await podsOnceEqual(prometheusUrl, ['gateway-0', 'llm-1', 'llm-2', 'prometheus-0']), [
      'gateway-0',
      'llm-1',
      'llm-2',
      'prometheus-0',
    ]);
    await cluster.removeReplica('llm', 'llm-1');
    assert.deepEqual(await podsOnceEqual(prometheusUrl, ['gateway-0', 'llm-2', 'prometheus-0']), [
      'gateway-0',
      'llm-2',
      'prometheus-0',
    ]);
  },
);
