// pnpm bench:gateway — the gateway's own overhead: GET /healthz (no middleware) beside an
// authenticated, rate-limited GET /models (key lookup, IP checks, Redis rate limit, headers),
// both answered by the gateway itself, in one run against one gateway process.
import autocannon from 'autocannon';
import { createKey } from '../support/admin.js';
import { startStack } from '../support/stack.js';

const durationSeconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function measure(name: string, url: string, headers: Record<string, string> = {}): Promise<Row> {
  // A short warm-up so JIT and connection set-up are not in the figures.
  await autocannon({ url, headers, connections, duration: 2 });
  const result = await autocannon({ url, headers, connections, duration: durationSeconds });
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

const stack = await startStack({ env: { LOG_LEVEL: 'warn' } });
try {
  const key = await createKey(stack.gateway, {
    name: 'bench',
    tier: 'enterprise',
    rate_limit_per_minute: 1_000_000_000,
  });
  const bare = await measure('GET /healthz (no middleware)', `${stack.gateway.url}/healthz`);
  const authed = await measure('GET /models (key + IP + Redis limit)', `${stack.gateway.url}/models`, {
    authorization: `Bearer ${key.key}`,
  });
  const pad = (s: string | number, n: number) => String(s).padEnd(n);
  console.log(
    `\ngateway benchmark: ${connections} connections, ${durationSeconds} s each, one gateway process\n`,
  );
  console.log(`${pad('route', 40)}${pad('req/s', 10)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}errors`);
  for (const row of [bare, authed]) {
    console.log(
      `${pad(row.name, 40)}${pad(Math.round(row.rps), 10)}${pad(row.p50, 9)}${pad(row.p99, 9)}${row.errors}`,
    );
  }
  const share = authed.rps / bare.rps;
  const added = authed.p50 - bare.p50;
  console.log(`\nauthenticated path keeps ${(share * 100).toFixed(1)}% of bare throughput (goal ≥ 60%)`);
  console.log(`authenticated path adds ${added.toFixed(2)} ms at p50 (goal ≤ 1 ms)`);
} finally {
  await stack.stop();
}
