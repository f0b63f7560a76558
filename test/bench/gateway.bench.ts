// pnpm bench:gateway — the gateway's own overhead: GET /healthz (no middleware) beside an
// authenticated, rate-limited GET /models (key lookup, IP checks, Redis rate limit, headers),
// both answered by the gateway itself, against one gateway process with its own NATS and Redis.
// Two views: throughput under load (autocannon, many connections) and unloaded latency (one
// keep-alive connection, requests one after another, timed in microseconds). Everything twice:
// with tracing off (the default) and on, exporting to a local OTLP/HTTP sink that answers 200.
import { once as eventOnce } from 'node:events';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
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

/** An OTLP/HTTP endpoint that accepts every export and keeps nothing. */
async function startSpanSink(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  server.listen(0, '127.0.0.1');
  await eventOnce(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface Row {
  name: string;
  tracing: string;
  load: Awaited<ReturnType<typeof throughput>>;
  idle: Awaited<ReturnType<typeof latency>>;
}

/** Both routes against a fresh gateway process started with `env`. */
async function measure(tracing: string, env: Record<string, string>): Promise<Row[]> {
  // The gateway in a process of its own, as deployed: load generated here must not share its event loop.
  const stack = await startStack({ env: { LOG_LEVEL: 'warn', ...env }, startGateway: spawnGateway });
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
    const rows: Row[] = [];
    for (const route of routes) {
      rows.push({
        name: route.name,
        tracing,
        load: await throughput(route.url, route.headers),
        idle: await latency(route.url, route.headers),
      });
    }
    return rows;
  } finally {
    await stack.stop();
  }
}

const sink = await startSpanSink();
let off: Row[];
let on: Row[];
try {
  off = await measure('off', {});
  on = await measure('on', { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url });
} finally {
  await sink.close();
}

const pad = (s: string | number, n: number) => String(s).padEnd(n);
console.log(
  `\ngateway benchmark — one gateway process, ${connections} connections for ${durationSeconds} s; then ${sequentialRequests} sequential requests on one connection\n`,
);
console.log(
  `${pad('route', 40)}${pad('tracing', 9)}${pad('req/s', 9)}${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('errors', 8)}${pad('1-conn p50 ms', 15)}1-conn p99 ms`,
);
for (const { name, tracing, load, idle } of [...off, ...on]) {
  console.log(
    `${pad(name, 40)}${pad(tracing, 9)}${pad(Math.round(load.rps), 9)}${pad(load.p50, 8)}${pad(load.p99, 8)}${pad(load.errors, 8)}${pad(idle.p50.toFixed(3), 15)}${idle.p99.toFixed(3)}`,
  );
}
const [bare, authed] = off as [Row, Row];
console.log(
  `\nauthenticated path keeps ${((100 * authed.load.rps) / bare.load.rps).toFixed(1)}% of bare throughput (goal ≥ 60%)`,
);
console.log(
  `authenticated path adds ${(authed.idle.p50 - bare.idle.p50).toFixed(3)} ms at p50, unloaded (goal ≤ 1 ms)`,
);
console.log(`under load it adds ${authed.load.p50 - bare.load.p50} ms at p50 (queueing included)`);
const [, tracedAuthed] = on as [Row, Row];
console.log(
  `tracing on: the authenticated path runs at ${((100 * tracedAuthed.load.rps) / authed.load.rps).toFixed(1)}% of its throughput with tracing off, ${(tracedAuthed.idle.p50 - authed.idle.p50).toFixed(3)} ms more at p50 unloaded (/healthz is never traced)`,
);
