// Leak waves: the same wave of traffic (browser sessions, streamed queries with some dropped by the
// client mid-stream, uploads with some cut off mid-body, animation jobs with some canceled) runs
// again and again through two gateways; what the cluster holds after the last wave must be what it
// held after the first. Per process: resident memory within 15 %, open file descriptors back to
// the level before the waves (a few of slack); no Chromium beyond the warm pool, no ffmpeg, no
// file left in the workers' temp folders or the browser profile root; NATS consumers no more than
// before, and KV entries growing by no more than the records the API keeps on purpose (closed
// sessions' details for an hour, jobs for a day).
//
// A full wave is 300 sessions, 2 000 queries, 200 uploads and 100 jobs (LEAK_SCALE=1). A 0.05 wave
// takes about 20 s on a quiet 2-core machine and 90–180 s on a loaded one, so `npm test` runs the
// waves at LEAK_SCALE=0.05 (15 sessions, 100 queries, 10 uploads, 5 jobs a wave) to stay within a
// few minutes; the assertions are the same at any scale. LEAK_WAVES sets the number of waves (3).
//
// Resident memory is read after a full garbage collection in each process (through its inspector),
// so that it measures what the process holds, not garbage awaiting the collector or a young
// generation V8 grew for the last burst; what it was before that collection is printed beside it.
//
// The workers get temp folders of their own (TMPDIR), so the comparison is exact and not disturbed
// by other test files writing to the system's /tmp at the same time.
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import { bearer } from '../support/admin.js';
import { gatewayLinesNaming, startFaultCluster, type FaultCluster } from '../support/fault-cluster.js';
import { runWave, type WaveCounts, type WaveTargets } from '../support/leak-wave.js';
import { collectGarbage, gcReachableEnv } from '../support/heap.js';
import { childrenByName, filesUnder, mib, openFds, rss } from '../support/resource-census.js';
import { sleep } from '../support/stack.js';

const scale = Number(process.env.LEAK_SCALE ?? 0.05);
const waves = Math.max(2, Number(process.env.LEAK_WAVES ?? 3));
const fullWave: WaveCounts = { sessions: 300, queries: 2000, uploads: 200, jobs: 100 };
const wave = Object.fromEntries(
  Object.entries(fullWave).map(([kind, n]) => [kind, Math.max(1, Math.round(n * scale))]),
) as unknown as WaveCounts;
/** Resident memory after the last wave may exceed that after the first by this share. */
const RSS_GROWTH = 0.15;
/** Descriptors a process may hold beyond its level before the waves (pooled connections). */
const FD_SLACK = 8;
/** Time for closed sessions, cut uploads and canceled jobs to be cleaned up, and the pool refilled. */
const SETTLE_MS = 60_000;

/** What the cluster holds at one moment, but for memory: cheap enough to poll. */
interface Holdings {
  fds: Map<string, number>;
  /** Descendant processes of each process, by command name. */
  children: Map<string, Map<string, number>>;
  /** Entries under each watched folder. */
  files: Map<string, string[]>;
  consumers: number;
  /** Subjects with a value in each KV bucket. */
  kvKeys: Map<string, number>;
}

/** Holdings with each process's memory. */
interface Census extends Holdings {
  /** Resident memory after a full garbage collection. */
  rss: Map<string, number>;
  /** Resident memory as found, before that collection. */
  rssUncollected: Map<string, number>;
}

describe('leak waves', { timeout: 60 * 60_000 }, () => {
  let root: string;
  let cluster: FaultCluster;
  let nc: NatsConnection;
  /** Folders the workers write to: their own TMPDIRs and the browser profile root. */
  const folders = new Map<string, string>();
  let targets: WaveTargets;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'sb-leak-waves-'));
    // The browser worker starts Chromium as a user of its own, which must reach its profiles.
    await chmod(root, 0o711);
    for (const name of ['llm', 'whisper', 'diffusion', 'animation', 'browser-profiles']) {
      const dir = join(root, name);
      await mkdir(dir, { mode: 0o711 });
      await chmod(dir, 0o711);
      folders.set(name, dir);
    }
    const tmp = (name: string) => ({ TMPDIR: folders.get(name)!, ...gcReachableEnv });
    cluster = await startFaultCluster({
      workers: ['llm', 'whisper', 'diffusion', 'animation', 'browser'],
      gatewayEnv: gcReachableEnv,
      workerEnv: {
        llm: tmp('llm'),
        whisper: tmp('whisper'),
        diffusion: tmp('diffusion'),
        animation: tmp('animation'),
        browser: { BROWSER_PROFILE_ROOT: folders.get('browser-profiles')!, ...gcReachableEnv },
      },
    });
    nc = await connect(cluster.nats.connectOptions('operator'));
    // The jobs animate an image the key made: the job then refers to a stored object rather than
    // uploading one (s3rver, the test S3 server, lacks the multipart listing a streamed upload
    // of unknown size starts with).
    const made = await fetch(`${cluster.gateways[0]!.url}/generate-image`, {
      method: 'POST',
      headers: { ...bearer(cluster.key.key), 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'a lighthouse', width: 64, height: 64, steps: 2, seed: 1 }),
    });
    assert.equal(made.status, 200, await made.clone().text());
    targets = {
      gateways: cluster.gateways,
      key: cluster.key.key,
      pageUrl: `${cluster.site.origin}/form`,
      image: ((await made.json()) as { url: string }).url,
    };
  });

  after(async () => {
    await nc?.close();
    await cluster?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const processes = () =>
    [...cluster.gateways, ...Object.values(cluster.workers)].map(
      (p) => [p.name, p.pid!, () => p.output()] as const,
    );

  async function holdings(): Promise<Holdings> {
    const jsm = await nc.jetstreamManager();
    let consumers = 0;
    const kvKeys = new Map<string, number>();
    for (const stream of await jsm.streams.list().next()) {
      consumers += (await jsm.consumers.list(stream.config.name).next()).length;
      if (stream.config.name.startsWith('KV_'))
        kvKeys.set(stream.config.name, stream.state.num_subjects ?? 0);
    }
    const files = new Map<string, string[]>();
    for (const [name, dir] of folders) files.set(name, await filesUnder(dir));
    const procs = processes();
    return {
      fds: new Map(procs.map(([name, pid]) => [name, openFds(pid)])),
      children: new Map(procs.map(([name, pid]) => [name, childrenByName(pid)])),
      files,
      consumers,
      kvKeys,
    };
  }

  /** Each process's resident memory, as found and after a full garbage collection in it. */
  async function memory(): Promise<Pick<Census, 'rss' | 'rssUncollected'>> {
    const procs = processes();
    const rssUncollected = new Map(procs.map(([name, pid]) => [name, rss(pid)]));
    for (const [, pid, output] of procs) await collectGarbage(pid, output);
    return { rss: new Map(procs.map(([name, pid]) => [name, rss(pid)])), rssUncollected };
  }

  /**
   * The gateways' lines for the failed calls, then the end of each process's log (warnings and
   * errors), for failure messages.
   */
  const logs = (failures: readonly string[]) =>
    [
      `gateway lines for the failed calls:\n${gatewayLinesNaming(cluster, failures).join('\n')}`,
      ...[...cluster.gateways, ...Object.values(cluster.workers)].map(
        (p) => `${p.name}:\n${p.output().slice(-1500)}`,
      ),
    ].join('\n');

  /** Top-level entries of a watched folder (a pooled browser's profile is one, whatever is inside). */
  const topLevel = (paths: readonly string[]) => paths.filter((p) => !p.includes('/'));
  const childCount = (c: Holdings, name: string) =>
    [...(c.children.get(name)?.values() ?? [])].reduce((a, b) => a + b, 0);

  /** Each process's memory and descriptors in a census, a line each. */
  const levels = (c: Census) =>
    [...c.rss]
      .map(
        ([name, bytes]) =>
          `  ${name.padEnd(10)} rss ${mib(bytes).padStart(6)} MiB ` +
          `(${mib(c.rssUncollected.get(name)!).padStart(6)} before collection)  fds ${c.fds.get(name)}`,
      )
      .join('\n');

  /**
   * Waits until what the cluster holds has gone back to `base` (or SETTLE_MS pass), then returns
   * that with each process's memory (collected once, not on every poll).
   */
  async function settledCensus(base: Holdings): Promise<Census> {
    const deadline = Date.now() + SETTLE_MS;
    // Idle keep-alive sockets close after the servers' 5 s timeouts; give them that at least.
    await sleep(6000);
    for (;;) {
      const now = await holdings();
      const settled =
        [...now.children.keys()].every((name) => childCount(now, name) <= childCount(base, name)) &&
        [...now.files].every(
          ([name, paths]) => topLevel(paths).length <= topLevel(base.files.get(name)!).length,
        ) &&
        [...now.fds].every(([name, n]) => n <= base.fds.get(name)! + FD_SLACK);
      if (settled || Date.now() > deadline) return { ...now, ...(await memory()) };
      await sleep(1000);
    }
  }

  it(`holds no more after ${waves} waves of ${JSON.stringify(wave)} than after the first`, async () => {
    // A burst first: as many calls of each kind at once as a wave ever has open, or more (uploads:
    // more than the whisper worker batches together), so connections opened on first use (gRPC
    // channels, S3, the Chromium pool), batches and the allocators' arenas have the size the waves
    // can ask of them before the level they are compared with is taken. Without it a wave that happened to form a larger batch
    // than the first raised the whisper worker's RSS by 100 MiB, once.
    const warmUp = await runWave(targets, { sessions: 3, queries: 8, uploads: 6, jobs: 5 }, true);
    assert.deepEqual(warmUp.failures, [], `warm-up; the processes said:\n${logs(warmUp.failures)}`);
    const base = await settledCensus(await holdings());
    console.log(`before the waves:\n${levels(base)}`);
    const after: Census[] = [];
    for (let i = 1; i <= waves; i++) {
      const result = await runWave(targets, wave);
      console.log(
        `wave ${i}: ${(result.wallMs / 1000).toFixed(0)} s, ${result.failures.length} failed calls, ` +
          `${result.createRetries} session creates retried after a 503`,
      );
      assert.deepEqual(result.failures, [], `wave ${i}; the processes said:\n${logs(result.failures)}`);
      after.push(await settledCensus(base));
      console.log(levels(after.at(-1)!));
    }
    const [first, last] = [after[0]!, after.at(-1)!];

    const grown = [...last.rss]
      .filter(([name, bytes]) => bytes > first.rss.get(name)! * (1 + RSS_GROWTH))
      .map(([name, bytes]) => `${name}: ${mib(first.rss.get(name)!)} → ${mib(bytes)} MiB`);
    assert.deepEqual(grown, [], 'resident memory grew by more than 15 % between the first and the last wave');

    const fdsHeld = [...last.fds]
      .filter(([name, n]) => n > base.fds.get(name)! + FD_SLACK)
      .map(([name, n]) => `${name}: ${base.fds.get(name)} → ${n}`);
    assert.deepEqual(fdsHeld, [], 'file descriptors not back to their level before the waves');

    for (const [name, counts] of last.children) {
      assert.equal(counts.get('ffmpeg') ?? 0, 0, `${name} left ffmpeg running`);
      assert.ok(
        childCount(last, name) <= childCount(base, name),
        `${name} has ${JSON.stringify([...counts])} running, before the waves ${JSON.stringify([...base.children.get(name)!])}`,
      );
    }
    for (const [name, paths] of last.files) {
      const before = topLevel(base.files.get(name)!);
      const left = topLevel(paths).filter((p) => !before.includes(p));
      // The warm pool's browser is a new one after the waves, with a profile of its own.
      const pooled = name === 'browser-profiles' ? before.length : 0;
      assert.ok(left.length <= pooled, `${name} keeps ${left.join(', ')} (before: ${before.join(', ')})`);
    }

    assert.ok(
      last.consumers <= base.consumers,
      `NATS consumers: ${base.consumers} before the waves, ${last.consumers} after`,
    );
    // Kept on purpose, per wave: a job record, a session record, an idempotency or event entry
    // each; nothing per query or upload.
    const keptPerWave = 2 * (wave.jobs + wave.sessions);
    for (const [bucket, keys] of last.kvKeys) {
      const grew = keys - (first.kvKeys.get(bucket) ?? 0);
      assert.ok(
        grew <= (waves - 1) * keptPerWave,
        `${bucket} grew by ${grew} entries over ${waves - 1} waves (bound ${(waves - 1) * keptPerWave})`,
      );
    }
  });
});
