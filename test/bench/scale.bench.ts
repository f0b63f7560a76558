// npm run bench:scale — one gateway in front of 1, then 3 replicas of the llm and diffusion
// workers, in one run of the local runner's replica mode (SWITCHBOARD_REPLICAS: every replica on
// its own loopback address behind one DNS name; the extra replicas added at run time):
//   llm        streaming /query on the trained TinyStories-656K of the published model files (greedy)
//   diffusion  /generate-image on the tiny development pipeline
// For each worker and replica count it prints the aggregate throughput through the gateway and
// each replica's share of the gateway's calls, counted by the replica's own metrics:
//   uniform  BENCH_LLM_CLIENTS / BENCH_IMAGE_CLIENTS clients sending equal requests one after the
//            other, BENCH_LLM_REQUESTS / BENCH_IMAGES in all;
//   uneven   (3 replicas) the same, while replica 2 is also given long generations straight over
//            gRPC, as another gateway replica would give it (BENCH_LONG_STREAMS at once, back to
//            back: BENCH_LONG_TOKENS tokens; BENCH_LONG_STEPS steps at BENCH_LONG_SIDE²); which
//            replica took the most new calls from this gateway.
// New replicas are warmed up before they are measured (a cold replica is slower and so, rightly,
// gets fewer calls), after BENCH_SETTLE_MS for the gateway to re-resolve the name. Numbers, not
// assertions: on a 2-core machine three replicas cannot be three times faster; the share is the
// figure that matters.
import { cp, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Diffusion, Llm } from '@switchboard/contracts';
import { freePort, startCluster, type Cluster } from '@switchboard/devcluster';
import { callMetadata, createClient, unary } from '@switchboard/grpc';
import { buildTinyDiffusion } from '@switchboard/models-dev';
import { repoRoot } from '../support/gateway.js';
import { requirePublishedModels } from '../support/shared-models.js';
import { streamedQuery } from './streamed-query.js';

const llmClients = Number(process.env.BENCH_LLM_CLIENTS ?? 6);
const llmRequests = Number(process.env.BENCH_LLM_REQUESTS ?? 180);
const tokens = Number(process.env.BENCH_TOKENS ?? 64);
const longTokens = Number(process.env.BENCH_LONG_TOKENS ?? 400);
const imageClients = Number(process.env.BENCH_IMAGE_CLIENTS ?? 3);
const images = Number(process.env.BENCH_IMAGES ?? 72);
const steps = Number(process.env.BENCH_STEPS ?? 4);
const longSteps = Number(process.env.BENCH_LONG_STEPS ?? 40);
const longStreams = Number(process.env.BENCH_LONG_STREAMS ?? 2);
const side = Number(process.env.BENCH_SIDE ?? 128);
const longSide = Number(process.env.BENCH_LONG_SIDE ?? 256);
const settleMs = Number(process.env.BENCH_SETTLE_MS ?? 6000);
const ortThreads = process.env.BENCH_ORT_THREADS ?? '1';
/** Rounds of warm-up requests per client and replica. */
const warmUpRounds = Number(process.env.BENCH_WARMUP_ROUNDS ?? 20);

const LLM_MODEL = 'TinyStories-656K';
/** The workers trust calls that carry it; the bench's direct calls to one replica do. */
const clusterSecret = randomBytes(32).toString('hex');
const prompts = [
  'Once upon a time',
  'Tom and his dog went to the park. They played with a red ball until',
  'Lily wanted a cake',
  'One day, a little bird sat on a branch and looked at the big blue sky. It wanted to',
];

// ---- load -----------------------------------------------------------------------------------

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

/** One streamed /query read to its end; resolves with its completion tokens (0 when refused). */
async function streamQuery(url: string, key: string, prompt: string, maxTokens: number) {
  const streamed = await streamedQuery(agent, url, key, {
    model: LLM_MODEL,
    prompt,
    max_tokens: maxTokens,
    temperature: 0,
  });
  const failed = streamed.status !== 200 || streamed.code !== undefined;
  return {
    tokens: streamed.completionTokens,
    error: failed ? `${streamed.status} ${streamed.code ?? ''}`.trim() : undefined,
  };
}

async function generateImage(url: string, key: string, size: number, imageSteps: number, seed: number) {
  const res = await fetch(`${url}/generate-image`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      prompt: 'a lighthouse at dusk',
      width: size,
      height: size,
      steps: imageSteps,
      seed,
    }),
  });
  const text = await res.text();
  return res.status === 200 ? {} : { error: `${res.status} ${/"code":"([a-z_]+)"/.exec(text)?.[1] ?? ''}` };
}

/** `clients` clients sending one request after another, `requests` in all; units done and wall time. */
async function runLoad(
  clients: number,
  requests: number,
  send: (n: number) => Promise<{ units: number; error?: string }>,
) {
  let next = 0;
  let units = 0;
  const errors = new Map<string, number>();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < requests) {
        const result = await send(next++);
        units += result.units;
        if (result.error) errors.set(result.error, (errors.get(result.error) ?? 0) + 1);
      }
    }),
  );
  const errorText = [...errors].map(([kind, n]) => `${n} × ${kind}`).join('; ') || '0';
  return { units, wallMs: performance.now() - started, errors: errorText };
}

type Replica = ReturnType<Cluster['replicas']>[number];

/**
 * Long requests straight to one replica over gRPC, `streams` at once, back to back until stopped:
 * work the gateway under test does not see, as another gateway replica's calls would be.
 */
function longWork(worker: 'llm' | 'diffusion', replica: Replica) {
  const options = { deadlineMs: 300_000, clusterSecret };
  const metadata = (n: number) => callMetadata({ requestId: `bench-long-${n}`, keyId: 'bench-scale' });
  let send: (n: number) => Promise<unknown>;
  let close: () => void;
  if (worker === 'llm') {
    const client = createClient(Llm, replica.address, options);
    send = (n) =>
      unary(
        client.Complete.bind(client),
        { prompt: prompts[n % prompts.length]!, model: LLM_MODEL, max_tokens: longTokens, temperature: 0 },
        metadata(n),
      );
    close = () => client.close();
  } else {
    const client = createClient(Diffusion, replica.address, options);
    send = (n) =>
      unary(
        client.GenerateImage.bind(client),
        { prompt: 'a lighthouse at dusk', width: longSide, height: longSide, steps: longSteps, seed: n },
        metadata(n),
      );
    close = () => client.close();
  }
  const state = { done: false, sent: 0 };
  const finished = Promise.all(
    Array.from({ length: longStreams }, async () => {
      while (!state.done) await send(state.sent++);
    }),
  );
  return {
    replica,
    stop: async () => {
      state.done = true;
      await finished;
      close();
      return state.sent;
    },
  };
}

// ---- counting what each replica served --------------------------------------------------------

/** Sum of a metric's samples whose labels include `labels`, from a Prometheus text page. */
function metricSum(page: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of page.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const set = match[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) sum += Number(match[3]);
  }
  return sum;
}

/** Each replica's finished calls now, by replica name. */
async function snapshot(cluster: Cluster, worker: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const replica of cluster.replicas(worker)) {
    const page = await (await fetch(replica.metricsUrl)).text();
    counts.set(
      replica.name,
      worker === 'llm'
        ? metricSum(page, 'llm_requests_total')
        : metricSum(page, 'diffusion_images_total', { outcome: 'ok' }),
    );
  }
  return counts;
}

/** The gateway's calls per replica between two snapshots: all it finished less the direct ones. */
function callsBetween(
  before: Map<string, number>,
  after: Map<string, number>,
  direct?: { name: string; calls: number },
): Map<string, number> {
  const calls = new Map<string, number>();
  for (const [name, now] of after) {
    calls.set(name, now - (before.get(name) ?? 0) - (name === direct?.name ? direct.calls : 0));
  }
  return calls;
}

// ---- the table ------------------------------------------------------------------------------

const rows: Record<string, string | number>[] = [];
const shortName = (name: string) => name.replace(/^[a-z]+-/, 'r');

function record(
  worker: string,
  replicas: number,
  throughput: string,
  calls: Map<string, number>,
  errors: string,
  direct?: { name: string; calls: number },
) {
  const total = [...calls.values()].reduce((n, c) => n + c, 0);
  const even = total / calls.size;
  const load = direct ? `uneven: ${shortName(direct.name)} also given ${direct.calls} long` : 'uniform';
  const row: Record<string, string | number> = { worker, replicas, load, throughput, calls: total };
  // Fixed columns, so every row lines up whatever it holds.
  for (let i = 1; i <= 3; i++) row[`r${i} share`] = '';
  for (const [name, n] of calls) {
    row[`${shortName(name)} share`] = total > 0 ? `${n} (${Math.round((n / total) * 100)}%)` : '0';
  }
  const worst = Math.max(...[...calls.values()].map((n) => Math.abs(n - even) / even));
  row['max off even'] = calls.size > 1 && total > 0 ? `${Math.round(worst * 100)}%` : '';
  const most = [...calls].sort((a, b) => b[1] - a[1])[0]!;
  const least = [...calls].sort((a, b) => a[1] - b[1])[0]!;
  row['most new calls'] = direct ? shortName(most[0]) : '';
  row['fewest'] = direct ? shortName(least[0]) : '';
  row.errors = errors;
  rows.push(row);
}

// ---- run ------------------------------------------------------------------------------------

async function measure(cluster: Cluster, key: string, uneven: boolean): Promise<void> {
  const url = cluster.gatewayUrl;
  const replicas = cluster.replicas('llm').length;
  // llm
  let before = await snapshot(cluster, 'llm');
  let long = uneven ? longWork('llm', cluster.replicas('llm')[1]!) : undefined;
  const llm = await runLoad(llmClients, llmRequests, async (n) => {
    const result = await streamQuery(url, key, prompts[n % prompts.length]!, tokens);
    return { units: result.tokens, error: result.error };
  });
  let direct = long ? { name: long.replica.name, calls: await long.stop() } : undefined;
  const tokS = `${Math.round((llm.units / llm.wallMs) * 1000)} tok/s`;
  record(
    'llm',
    replicas,
    tokS,
    callsBetween(before, await snapshot(cluster, 'llm'), direct),
    llm.errors,
    direct,
  );
  // diffusion
  before = await snapshot(cluster, 'diffusion');
  long = uneven ? longWork('diffusion', cluster.replicas('diffusion')[1]!) : undefined;
  const diffusion = await runLoad(imageClients, images, async (n) => {
    const result = await generateImage(url, key, side, steps, 1000 + n);
    return { units: result.error ? 0 : 1, error: result.error };
  });
  direct = long ? { name: long.replica.name, calls: await long.stop() } : undefined;
  const perMinute = `${((diffusion.units / diffusion.wallMs) * 60_000).toFixed(1)} images/min`;
  const calls = callsBetween(before, await snapshot(cluster, 'diffusion'), direct);
  record('diffusion', replicas, perMinute, calls, diffusion.errors, direct);
}

/** JIT, sockets and ONNX Runtime arenas of every replica: a few rounds of each kind of request. */
async function warmUp(cluster: Cluster, key: string): Promise<void> {
  const url = cluster.gatewayUrl;
  const rounds = warmUpRounds * cluster.replicas('llm').length;
  await runLoad(llmClients, rounds * llmClients, async (n) => {
    const result = await streamQuery(url, key, prompts[n % prompts.length]!, n % 2 ? longTokens : tokens);
    return { units: result.tokens };
  });
  await runLoad(imageClients, rounds * imageClients, async (n) => {
    await generateImage(url, key, n % 2 ? longSide : side, steps, n);
    return { units: 1 };
  });
}

async function createKey(cluster: Cluster): Promise<string> {
  const res = await fetch(`${cluster.gatewayUrl}/admin/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${cluster.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench-scale', tier: 'enterprise', rate_limit_per_minute: 1_000_000 }),
  });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { key: string }).key;
}

/** The gateway's own per-replica call counts, where it keeps them (`switchboard_worker_calls_total`). */
async function gatewayCounts(metricsUrl: string): Promise<string[]> {
  const page = await fetch(metricsUrl).then(
    (res) => res.text(),
    () => '',
  );
  return page.split('\n').filter((line) => line.startsWith('switchboard_worker_calls_total{'));
}

const stateDir = await mkdtemp(join(tmpdir(), 'switchboard-bench-scale-'));
const modelDir = join(stateDir, 'models');
await cp(requirePublishedModels('llm', LLM_MODEL), join(modelDir, 'llm', LLM_MODEL), { recursive: true });
await buildTinyDiffusion(join(modelDir, 'diffusion', 'tiny-sd-dev'), { seed: 0 });
const gatewayMetricsPort = await freePort();
const cluster = await startCluster({
  root: repoRoot,
  workers: ['llm', 'diffusion'],
  env: {
    PATH: process.env.PATH ?? '',
    SWITCHBOARD_STATE_DIR: stateDir,
    MODEL_DIR: modelDir,
    GATEWAY_PORT: String(await freePort()),
    GATEWAY_METRICS_PORT: String(gatewayMetricsPort),
    LOG_LEVEL: 'error',
    ORT_INTRA_OP_THREADS: ortThreads,
    SWITCHBOARD_REPLICAS: 'llm=1,diffusion=1',
    CLUSTER_SECRET: clusterSecret,
  },
  onCrash: (service, output) => process.stderr.write(`${service} exited:\n${output}\n`),
});
try {
  const key = await createKey(cluster);
  process.stdout.write(
    `\nscale bench: one gateway; llm ${LLM_MODEL}, ${llmClients} streaming clients, ${llmRequests} × ${tokens} tokens ` +
      `(long: ${longTokens}); diffusion tiny-sd-dev ${side}², ${imageClients} clients, ${images} × ${steps} steps ` +
      `(long: ${longSide}², ${longSteps} steps); ${ortThreads} ONNX Runtime thread(s) per replica, CPU\n`,
  );
  await warmUp(cluster, key);
  await measure(cluster, key, false);
  for (const worker of ['llm', 'diffusion']) {
    while (cluster.replicas(worker).length < 3) await cluster.addReplica(worker);
  }
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  for (const worker of ['llm', 'diffusion']) {
    process.stdout.write(
      `${worker}: ${cluster.workerAddresses[`${worker.toUpperCase()}_ADDR`]} → ` +
        `${cluster
          .replicas(worker)
          .map((r) => `${r.name} ${r.host}`)
          .join(', ')}\n`,
    );
  }
  // The new replicas are cold: a slower replica finishes fewer calls and so, rightly, gets fewer.
  await warmUp(cluster, key);
  await measure(cluster, key, false);
  await measure(cluster, key, true);
  console.table(rows);
  const perAddress = await gatewayCounts(`http://127.0.0.1:${gatewayMetricsPort}/metrics`);
  process.stdout.write(
    perAddress.length > 0
      ? `the gateway's own count of calls per replica (whole run):\n${perAddress.join('\n')}\n`
      : 'the gateway keeps no per-replica call count (switchboard_worker_calls_total)\n',
  );
} finally {
  agent.destroy();
  await cluster.stop();
  await rm(stateDir, { recursive: true, force: true });
}
