// The object store (S3) down for 20 s under a mix of calls that do not need it: calls that store
// or read a file answer `503 unavailable` with `Retry-After` while it is away (never a 500, never
// a hang), calls that do not need it are untouched, animation jobs queued or running when it went
// finish once it is back, and every file stored before is still there, all without restarting
// anything.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer } from '../support/admin.js';
import type { JobView } from '../support/animation.js';
import type { FaultCluster } from '../support/fault-cluster.js';
import { startLoadedCluster, type LoadedCluster } from '../support/loaded-cluster.js';
import type { MixedLoad } from '../support/mixed-load.js';
import { sleep, until } from '../support/stack.js';

const OUTAGE_MS = 20_000;
/** How soon after the store is back calls that need it must succeed again. */
const RECOVERY_MS = 10_000;

interface Outcome {
  what: string;
  status: number;
  code?: string;
  retryAfter: string | null;
  ms: number;
}

describe('object store down for 20 s', { timeout: 15 * 60_000 }, () => {
  let loaded: LoadedCluster | undefined;
  let c: FaultCluster;
  let load: MixedLoad;
  let explain: LoadedCluster['explain'];

  before(async () => {
    // Calls that never touch the store.
    loaded = await startLoadedCluster({ gateways: 2 }, { routes: ['query-stream', 'transcribe', 'usage'] });
    ({ cluster: c, load, explain } = loaded);
  });

  after(async () => {
    await loaded?.stop();
  });

  const url = (i: number, path: string) => `${c.gateways[i % c.gateways.length]!.url}${path}`;
  const auth = () => bearer(c.key.key);
  const post = (i: number, path: string, body: unknown) =>
    fetch(url(i, path), {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  async function outcome(what: string, send: () => Promise<Response>): Promise<Outcome> {
    const started = Date.now();
    const res = await send();
    const text = await res.text();
    let code: string | undefined;
    try {
      code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
    } catch {
      code = undefined;
    }
    return {
      what,
      status: res.status,
      code,
      retryAfter: res.headers.get('retry-after'),
      ms: Date.now() - started,
    };
  }

  const generate = (i: number) =>
    post(i, '/generate-image', { prompt: 'a harbour', width: 64, height: 64, steps: 2, seed: i });

  async function storedImage(): Promise<{ path: string; bytes: Buffer }> {
    const res = await generate(0);
    assert.equal(res.status, 200, await res.clone().text());
    const { url: path } = (await res.json()) as { url: string };
    return { path, bytes: Buffer.from(await (await fetch(url(1, path), { headers: auth() })).arrayBuffer()) };
  }

  async function session(): Promise<string> {
    const res = await post(0, '/api/browser/session/create', { viewport_width: 320, viewport_height: 240 });
    assert.equal(res.status, 201, await res.clone().text());
    const { session_id: id } = (await res.json()) as { session_id: string };
    const nav = await post(0, `/api/browser/session/${id}/navigate`, { url: `${c.site.origin}/form` });
    assert.equal(nav.status, 200, await nav.text());
    return id;
  }

  async function screenshot(id: string): Promise<{ path: string; bytes: Buffer }> {
    const res = await post(1, `/api/browser/session/${id}/capture`, {});
    assert.equal(res.status, 200, await res.clone().text());
    const { url: path } = (await res.json()) as { url: string };
    return { path, bytes: Buffer.from(await (await fetch(url(0, path), { headers: auth() })).arrayBuffer()) };
  }

  const submit = (i: number, image: string) =>
    post(i, '/animate', { backend: 'video-diffusion', image, fps: 4, duration_s: 1, seed: 5 });
  const animate = async (image: string) => {
    const res = await submit(0, image);
    assert.equal(res.status, 202, await res.clone().text());
    return ((await res.json()) as { job_id: string }).job_id;
  };

  const job = async (id: string) =>
    (await (await fetch(url(1, `/animate/${id}`), { headers: auth() })).json()) as JobView;

  it('while it is away: 503 unavailable with Retry-After where a file is needed; after: all back, nothing lost', async () => {
    const image = await storedImage();
    const id = await session();
    const shot = await screenshot(id);
    const before = await animate(image.path);
    await until(
      async () => (await job(before)).status === 'succeeded',
      'a job before the outage succeeded',
      180_000,
    );

    // Queued or running when the store goes: they must not be lost.
    const during = [await animate(image.path), await animate(image.path)];
    await c.s3.stop();
    const down = Date.now();
    const outcomes: Outcome[] = [];
    let i = 0;
    while (Date.now() - down < OUTAGE_MS - 3_000) {
      i++;
      outcomes.push(
        ...(await Promise.all([
          outcome('generate-image', () => generate(i)),
          outcome('stored image', () => fetch(url(i, image.path), { headers: auth() })),
          outcome('screenshot', () => fetch(url(i, shot.path), { headers: auth() })),
          outcome('capture', () => post(i, `/api/browser/session/${id}/capture`, {})),
          outcome('animate', () => submit(i, image.path)),
        ])),
      );
      await sleep(500);
    }
    await sleep(Math.max(0, OUTAGE_MS - (Date.now() - down)));
    await c.s3.start();
    const back = Date.now();

    const bad = outcomes.filter(
      (o) => o.status !== 200 && !(o.status === 503 && o.code === 'unavailable' && o.retryAfter !== null),
    );
    assert.deepEqual(
      bad,
      [],
      'answers while the store was away: success, or 503 unavailable with Retry-After',
    );
    assert.ok(
      outcomes.some((o) => o.status === 503),
      'the outage was seen (no call needed the store?)',
    );
    const slow = outcomes.filter((o) => o.ms > 15_000);
    assert.deepEqual(slow, [], 'calls that hung while the store was away');

    // Calls that need the store succeed again soon after it is back.
    await until(
      async () => {
        const now = await Promise.all([
          outcome('generate-image', () => generate(99)),
          outcome('capture', () => post(1, `/api/browser/session/${id}/capture`, {})),
          outcome('stored image', () => fetch(url(1, image.path), { headers: auth() })),
        ]);
        return now.every((o) => o.status === 200);
      },
      'generate-image, capture and reads succeed again',
      RECOVERY_MS,
    );
    assert.ok(Date.now() - back <= RECOVERY_MS + 5_000);

    // Nothing stored before the outage was lost.
    for (const stored of [image, shot]) {
      const res = await fetch(url(0, stored.path), { headers: auth() });
      assert.equal(res.status, 200, stored.path);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(stored.bytes), `${stored.path} changed`);
    }
    // Jobs queued or running while it was away finish once it is back.
    for (const jobId of during) {
      await until(
        async () => ['succeeded', 'failed', 'canceled'].includes((await job(jobId)).status),
        `job ${jobId} ended`,
        180_000,
      );
      const view = await job(jobId);
      assert.equal(view.status, 'succeeded', `job submitted during the outage: ${JSON.stringify(view)}`);
    }
    await post(0, `/api/browser/session/${id}/close`, {});

    const failed = load.inFlightDuring(down, Date.now()).filter((call) => call.end !== undefined && !call.ok);
    assert.deepEqual(failed, [], `calls that need no store failed:\n${explain(failed)}`);
  });
});
