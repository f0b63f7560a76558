// pnpm bench:gateway — the gateway's own overhead: GET /healthz (no middleware) beside an
// authenticated, rate-limited GET /models (key lookup, IP checks, Redis rate limit, headers),
// both answered by the gateway itself, against one gateway process with its own NATS and Redis.
// Two views: throughput under load (autocannon, many connections) and unloaded latency (one
// keep-alive connection, requests one after another, timed in microseconds).
import { Agent, request } from 'node:http';
import autocannon from 'autocannon';
import { createKey } from '../support/admin.js';
import { startStack } from '../support/stack.js';
import { spawnGateway } from '../support/gateway.js';

const durationSeconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const sequentialRequests = Number(process.env.BENCH_SEQUENTIAL ?? 3000);

async function throughput(url: string, headers: Record<string, string>) {
  await autocannon({ url, headers, connections, duration: 2 }); // warm-up: JIT, sockets
  const result = await autocannon({ url, headers, connections, duration: durationSeconds });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

async function latency(url: string, headers: Record<string, string>) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const once = () =>
    new Promise<number>((resolve, reject) => {
      const started = process.hrtime.bigint();
      request(url, { agent, headers }, (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(Number(process.hrtime.bigint() - started) / 1e6)
            : reject(new Error(`status ${res.statusCode}`)),
        );
      })
        .on('error', reject)
        .end();
    });
  for (let i = 0; i < 300; i += 1) await once();
  const samples: number[] = [];
  for (let i = 0; i < sequentialRequests; i += 1) samples.push(await once());
  agent.destroy();
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}

// The gateway in a process of its own, as deployed: load generated here must not share its event loop.
const stack = await startStack({ env: { LOG_LEVEL: 'warn' }, startGateway: spawnGateway });
try {
  const key = await createKey(stack.gateway, {
    name: 'bench',
    tier: 'enterprise',
    rate_limit_per_minute: 1_000_000_000,
  });
  const routes: { name: string; url: string; headers: Record<string, string> }[] = [
    { name: 'GET /healthz (no middleware)', url: `${stack.gateway.url}/healthz`, headers: {} },
    {
      name: 'GET /models (key + IP + Redis limit)',
      url: `${stack.gateway.url}/models`,
      headers: { authorization: `Bearer ${key.key}` },
    },
  ];
  const rows = [];
  for (const route of routes) {
    rows.push({
      ...route,
      load: await throughput(route.url, route.headers),
      idle: await latency(route.url, route.headers),
    });
  }
  const pad = (s: string | number, n: number) => String(s).padEnd(n);
  console.log(
    `\ngateway benchmark — one gateway process, ${connections} connections for ${durationSeconds} s; then ${sequentialRequests} sequential requests on one connection\n`,
  );
  console.log(
    `${pad('route', 40)}${pad('req/s', 9)}${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('errors', 8)}${pad('1-conn p50 ms', 15)}1-conn p99 ms`,
  );
  for (const { name, load, idle } of rows) {
    console.log(
      `${pad(name, 40)}${pad(Math.round(load.rps), 9)}${pad(load.p50, 8)}${pad(load.p99, 8)}${pad(load.errors, 8)}${pad(idle.p50.toFixed(3), 15)}${idle.p99.toFixed(3)}`,
    );
  }
  const [bare, authed] = rows as [(typeof rows)[0], (typeof rows)[0]];
  console.log(
    `\nauthenticated path keeps ${((100 * authed.load.rps) / bare.load.rps).toFixed(1)}% of bare throughput (goal ≥ 60%)`,
  );
  console.log(
    `authenticated path adds ${(authed.idle.p50 - bare.idle.p50).toFixed(3)} ms at p50, unloaded (goal ≤ 1 ms)`,
  );
  console.log(`under load it adds ${authed.load.p50 - bare.load.p50} ms at p50 (queueing included)`);
} finally {
  await stack.stop();
}
