// npm run bench:soak — the whole cluster under a steady mixed load for a long while: does anything
// drift? Every worker on its tiny development models, NATS, Redis, PostgreSQL, an S3 server and two
// gateway replicas; the load (streamed /query, /transcribe, /generate-image, browser sessions,
// /animate jobs followed to their end, /usage) spread over both gateways in turn. Each route runs
// one call at a time and starts the next 1/SOAK_RATE seconds after the previous one ended (so a
// route makes at most SOAK_RATE calls a second, fewer when its calls take long; default 2) for
// SOAK_MINUTES (default 10).
// Printed every minute: calls ended and their rate, failed calls, p50/p99 latency per route (an
// animate call lasts until its job has ended), and each process's resident memory. At the end,
// whether the goals hold: no failed call, every route's p99 in the last minute within 1.5× its p99
// in the second (the first warms up), each process's memory in the last minute within 15 % of its
// median over minutes 2–4 (one minute alone may sit in the dip after a collection). Numbers, not
// assertions.
import { startFaultCluster } from '../support/fault-cluster.js';
import { loadRoutes, startMixedLoad, type CallRecord } from '../support/mixed-load.js';
import { mib, rss } from '../support/resource-census.js';
import { sleep } from '../support/stack.js';
import { percentile } from './stats.js';

const minutes = Number(process.env.SOAK_MINUTES ?? 10);
const rate = Number(process.env.SOAK_RATE ?? 2);
const MINUTE_MS = Number(process.env.SOAK_MINUTE_MS ?? 60_000);
const P99_GROWTH = 1.5;
const RSS_GROWTH = 0.15;

interface Minute {
  ended: CallRecord[];
  /** Resident memory of each process at the minute's end. */
  rss: Map<string, number>;
}

const fmt = (ms: number) => (Number.isNaN(ms) ? '-' : ms.toFixed(0)).padStart(6);

const cluster = await startFaultCluster();
let load: Awaited<ReturnType<typeof startMixedLoad>> | undefined;
try {
  const processes = () => [
    ...cluster.gateways.map((g) => [g.name, g.pid!] as const),
    ...Object.values(cluster.workers).map((w) => [w.name, w.pid!] as const),
  ];
  console.log(
    `soak: ${minutes} min, each route one call at a time, the next ${(1000 / rate).toFixed(0)} ms after the last ended; ` +
      `${cluster.gateways.length} gateways; processes ${processes()
        .map(([name]) => name)
        .join(', ')}`,
  );
  load = await startMixedLoad({
    gateways: cluster.gateways.map((g) => g.url),
    key: cluster.key.key,
    siteOrigin: cluster.site.origin,
    gapMs: 1000 / rate,
  });
  const started = Date.now();
  const result: Minute[] = [];
  for (let m = 1; m <= minutes; m++) {
    await sleep(started + m * MINUTE_MS - Date.now());
    const [from, to] = [started + (m - 1) * MINUTE_MS, started + m * MINUTE_MS];
    const ended = load.calls.filter((c) => c.end !== undefined && c.end > from && c.end <= to);
    const minute: Minute = { ended, rss: new Map(processes().map(([name, pid]) => [name, rss(pid)])) };
    result.push(minute);
    const failed = ended.filter((c) => !c.ok);
    console.log(
      `minute ${String(m).padStart(2)}: ${String(ended.length).padStart(5)} calls (${(ended.length / (MINUTE_MS / 1000)).toFixed(2)}/s), ${failed.length} failed`,
    );
    for (const route of loadRoutes) {
      const ms = ended.filter((c) => c.route === route).map((c) => c.end! - c.start);
      console.log(
        `  ${route.padEnd(15)} n ${String(ms.length).padStart(4)}  p50 ${fmt(percentile(ms, 50))} ms  p99 ${fmt(percentile(ms, 99))} ms`,
      );
    }
    console.log(`  rss MiB: ${[...minute.rss].map(([name, bytes]) => `${name} ${mib(bytes)}`).join(', ')}`);
    if (failed.length > 0) console.log(load.describe(failed.slice(0, 5)).replace(/^/gm, '    '));
  }
  await load.stop();

  // The goals, compared with the second minute (the first includes warm-up: JIT, pools, caches).
  const [second, last] = [result[1] ?? result[0]!, result.at(-1)!];
  const failures = load.failed();
  const p99 = (m: Minute, route: string) =>
    percentile(
      m.ended.filter((c) => c.route === route).map((c) => c.end! - c.start),
      99,
    );
  const slower = loadRoutes.filter((r) => p99(last, r) > P99_GROWTH * p99(second, r));
  const steady = steadyRss(result);
  const grew = [...last.rss].filter(([name, bytes]) => bytes > steady.get(name)! * (1 + RSS_GROWTH));
  console.log('');
  console.log(
    `calls: ${load.calls.length}, failed: ${failures.length}${failures.length === 0 ? ' (goal met)' : ''}`,
  );
  console.log(
    `p99, last minute vs second: ${loadRoutes
      .map((r) => `${r} ${fmt(p99(second, r)).trim()} → ${fmt(p99(last, r)).trim()} ms`)
      .join(', ')}; ` + (slower.length === 0 ? 'within 1.5× (goal met)' : `over 1.5×: ${slower.join(', ')}`),
  );
  console.log(
    `rss, last minute vs median of minutes 2–4: ${[...last.rss]
      .map(([name, bytes]) => `${name} ${mib(steady.get(name)!)} → ${mib(bytes)}`)
      .join(', ')} MiB; ` +
      (grew.length === 0 ? 'flat within 15 % (goal met)' : `grew > 15 %: ${grew.map(([n]) => n).join(', ')}`),
  );
  if (failures.length > 0) console.log(load.describe(failures.slice(0, 20)));
} finally {
  await load?.stop();
  await cluster.stop();
}

/** Each process's median resident memory over minutes 2–4 (those of them the run has). */
function steadyRss(minutes: Minute[]): Map<string, number> {
  const window = minutes.length > 1 ? minutes.slice(1, 4) : minutes;
  const names = new Set(window.flatMap((m) => [...m.rss.keys()]));
  return new Map(
    [...names].map((name) => [
      name,
      percentile(
        window.flatMap((m) => m.rss.get(name) ?? []),
        50,
      ),
    ]),
  );
}
