import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type JsMsg, type NatsConnection } from 'nats';
import { startNats, type NatsHandle } from '@switchboard/devcluster';
import type { SwitchboardError } from '@switchboard/errors';
import type { EventPublisher } from '@switchboard/events';
import { JobBoard } from './board.js';
import { newJobId } from './ids.js';
import { jobNames, type BackendName } from './names.js';
import type { JobParams } from './record.js';
import { JobTaker } from './taker.js';

let nats: NatsHandle;
const connections: NatsConnection[] = [];
let prefixCount = 0;

before(async () => {
  nats = await startNats();
});
after(async () => {
  for (const nc of connections) await nc.close();
  await nats.stop();
});

const params: JobParams = { seed: 1, motion_bucket_id: 127, noise_aug_strength: 0.02 };
const settings = { ackWaitMs: 1000, jobRetentionMs: 3_600_000 };

/** A board and a taker on their own connections and names, as a gateway and a worker would be. */
async function system(maxAttempts = 3) {
  const names = jobNames(`t${++prefixCount}`);
  const published: { subject: string; body: Record<string, unknown> }[] = [];
  const events = {
    publish: (subject: string, body: Record<string, unknown>) => published.push({ subject, body }),
  } as unknown as EventPublisher;
  const open = async () => {
    const nc = await connect(nats.connectOptions('operator'));
    connections.push(nc);
    return nc;
  };
  const board = await JobBoard.open(await open(), { ...settings, names, events });
  const board2 = await JobBoard.open(await open(), { ...settings, names, events });
  const taker = await JobTaker.open(await open(), {
    ...settings,
    names,
    events,
    maxAttempts,
    retryDelayMs: () => 0,
  });
  return { board, board2, taker, published };
}

const submission = (owner: string, extra: Partial<Parameters<JobBoard['submit']>[0]> = {}) => ({
  jobId: newJobId(),
  ownerKeyId: owner,
  backend: 'video-diffusion' as BackendName,
  params,
  inputs: { image: 'images/img-x.png' },
  activeLimit: 2,
  ...extra,
});

/** The next message of a back-end's consumer, as a worker with a free slot pulls it. */
async function nextMessage(taker: JobTaker, backend: BackendName = 'video-diffusion'): Promise<JsMsg> {
  const msg = await taker.next(backend, 5000);
  if (!msg) throw new Error('no message within 5 s');
  return msg;
}

test('boards opened at once on new names all set the system up (replicas starting together)', async () => {
  const events = { publish: () => undefined } as unknown as EventPublisher;
  for (let round = 0; round < 5; round++) {
    const names = jobNames(`race${round}`);
    const opened = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const nc = await connect(nats.connectOptions('operator'));
        connections.push(nc);
        return JobBoard.open(nc, { ...settings, names, events });
      }),
    );
    assert.equal(opened.length, 4);
  }
});

test('a job goes queued → running → succeeded once, with one event each', async () => {
  const { board, taker, published } = await system();
  const { job } = await board.submit(submission('ownerA'));
  assert.equal(job.status, 'queued');
  const attempt = await taker.start(await nextMessage(taker));
  assert.ok(attempt);
  assert.equal((await board.get('ownerA', job.job_id)).status, 'running');
  attempt.progress(0.5);
  const result = {
    video_key: `videos/${job.job_id}.mp4`,
    fps: 8,
    frames: 8,
    duration_s: 1,
    width: 64,
    height: 64,
  };
  assert.equal(await attempt.succeed(result), 'succeeded');
  const done = await board.get('ownerA', job.job_id);
  assert.equal(done.status, 'succeeded');
  assert.equal(done.progress, 1);
  assert.deepEqual(done.result, result);
  assert.deepEqual(
    published.map((e) => e.subject),
    ['animate.job.queued', 'animate.job.running', 'animate.job.succeeded'],
  );
  await assert.rejects(
    board.cancel('ownerA', job.job_id),
    (e: SwitchboardError) => e.code === 'job_finished',
  );
  await assert.rejects(board.get('ownerB', job.job_id), (e: SwitchboardError) => e.code === 'job_not_found');
});

test('the tier limit counts queued and running jobs across boards, and frees places', async () => {
  const { board, board2 } = await system();
  const results = await Promise.allSettled([
    board.submit(submission('ownerA')),
    board2.submit(submission('ownerA')),
    board.submit(submission('ownerA')),
    board2.submit(submission('ownerA')),
  ]);
  const admitted = results.filter((r) => r.status === 'fulfilled');
  assert.equal(admitted.length, 2);
  for (const r of results) {
    if (r.status === 'rejected') assert.equal((r.reason as SwitchboardError).code, 'job_limit');
  }
  const first = (admitted[0] as PromiseFulfilledResult<{ job: { job_id: string } }>).value.job;
  await board2.cancel('ownerA', first.job_id);
  await board.submit(submission('ownerA'));
  await assert.rejects(board.submit(submission('ownerA')), (e: SwitchboardError) => e.code === 'job_limit');
  // Another key has its own places.
  await board.submit(submission('ownerB'));
});

test('idempotency: same body → same job (also concurrently), other body → 422', async () => {
  const { board, board2 } = await system();
  const idem = (bodyHash: string) => ({ idempotency: { key: 'k-1', bodyHash } });
  const outcomes = await Promise.all([
    board.submit(submission('ownerA', idem('h1'))),
    board2.submit(submission('ownerA', idem('h1'))),
    board.submit(submission('ownerA', idem('h1'))),
  ]);
  const ids = new Set(outcomes.map((o) => o.job.job_id));
  assert.equal(ids.size, 1);
  assert.equal(outcomes.filter((o) => o.kind === 'created').length, 1);
  await assert.rejects(
    board.submit(submission('ownerA', idem('h2'))),
    (e: SwitchboardError) => e.code === 'idempotency_key_reused',
  );
  // The same header from another key is another claim.
  const other = await board.submit(submission('ownerB', idem('h2')));
  assert.equal(other.kind, 'created');
  const page = await board.list('ownerA', { limit: 10 });
  assert.equal(page.data.length, 1);
});

test('listing is newest first, pages with after, filters by status', async () => {
  const { board } = await system();
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const { job } = await board.submit(submission('ownerA', { activeLimit: 10 }));
    ids.push(job.job_id);
    await new Promise((r) => setTimeout(r, 2));
  }
  await board.cancel('ownerA', ids[1]!);
  const first = await board.list('ownerA', { limit: 2 });
  assert.deepEqual(
    first.data.map((j) => j.job_id),
    [ids[4], ids[3]],
  );
  assert.equal(first.has_more, true);
  const second = await board.list('ownerA', { limit: 2, after: ids[3] });
  assert.deepEqual(
    second.data.map((j) => j.job_id),
    [ids[2], ids[1]],
  );
  const last = await board.list('ownerA', { limit: 2, after: ids[1] });
  assert.deepEqual(
    last.data.map((j) => j.job_id),
    [ids[0]],
  );
  assert.equal(last.has_more, false);
  const canceled = await board.list('ownerA', { limit: 10, status: 'canceled' });
  assert.deepEqual(
    canceled.data.map((j) => j.job_id),
    [ids[1]],
  );
  assert.equal((await board.list(null, { limit: 10 })).data.length, 5);
});

test('a running job sees its cancel through the signal; its result is refused', async () => {
  const { board, taker } = await system();
  const { job } = await board.submit(submission('ownerA'));
  const attempt = (await taker.start(await nextMessage(taker)))!;
  const canceled = await board.cancel('ownerA', job.job_id);
  assert.equal(canceled.status, 'canceled');
  if (!attempt.signal.aborted) {
    await new Promise<void>((resolve) => attempt.signal.addEventListener('abort', () => resolve()));
  }
  assert.equal(attempt.canceled, true);
  const ending = await attempt.succeed({
    video_key: 'v',
    fps: 1,
    frames: 1,
    duration_s: 1,
    width: 1,
    height: 1,
  });
  assert.equal(ending, 'canceled');
  assert.equal((await board.get('ownerA', job.job_id)).status, 'canceled');
});

test('failures are retried, then the job fails with attempts_exhausted naming the last error', async () => {
  const { board, taker, published } = await system(2);
  const { job } = await board.submit(submission('ownerA'));
  const first = (await taker.start(await nextMessage(taker)))!;
  assert.equal(await first.fail({ code: 'internal', message: 'boom 1' }, false), 'retrying');
  const second = (await taker.start(await nextMessage(taker)))!;
  assert.equal(second.record.attempts, 2);
  assert.equal(await second.fail({ code: 'internal', message: 'boom 2' }, false), 'failed');
  const failed = await board.get('ownerA', job.job_id);
  assert.equal(failed.status, 'failed');
  assert.equal(failed.error?.code, 'attempts_exhausted');
  assert.match(failed.error?.message ?? '', /boom 2/);
  assert.equal(published.filter((e) => e.subject === 'animate.job.failed').length, 1);
});

test('an attempt postponed for an outage is not counted, however often, and the job still runs', async () => {
  const { board, taker } = await system(2);
  const { job } = await board.submit(submission('ownerA'));
  for (let i = 0; i < 3; i++) {
    const waiting = (await taker.start(await nextMessage(taker)))!;
    assert.equal(waiting.record.attempts, 1);
    assert.equal(await waiting.postpone('object store read failed (ECONNREFUSED)', 0), 'released');
    const queued = await board.get('ownerA', job.job_id);
    assert.deepEqual([queued.status, queued.attempts], ['queued', 0]);
  }
  const runs = (await taker.start(await nextMessage(taker)))!;
  await runs.succeed({ video_key: 'v', fps: 1, frames: 1, duration_s: 1, width: 1, height: 1 });
  const done = await board.get('ownerA', job.job_id);
  assert.deepEqual([done.status, done.attempts], ['succeeded', 1]);
});

test('a delivery whose worker vanished comes back after the ack wait and counts as an attempt', async () => {
  const { board, taker } = await system(2);
  const { job } = await board.submit(submission('ownerA'));
  const lost = (await taker.start(await nextMessage(taker)))!;
  // A dead worker sends no heartbeat and no ack.
  clearInterval((lost as unknown as { heartbeat: NodeJS.Timeout }).heartbeat);
  const again = (await taker.start(await nextMessage(taker)))!;
  assert.equal(again.record.attempts, 2);
  assert.match(again.record.last_error ?? '', /stopped without finishing/);
  await again.succeed({ video_key: 'v', fps: 1, frames: 1, duration_s: 1, width: 1, height: 1 });
  assert.equal((await board.get('ownerA', job.job_id)).status, 'succeeded');
});

test('a permanent error fails the job at once with its own code', async () => {
  const { board, taker } = await system(3);
  const { job } = await board.submit(submission('ownerA', { backend: 'avatar' }));
  const attempt = (await taker.start(await nextMessage(taker, 'avatar')))!;
  await attempt.fail({ code: 'upstream_failed', message: 'vendor said no' }, true);
  const failed = await board.get('ownerA', job.job_id);
  assert.deepEqual(failed.error, { code: 'upstream_failed', message: 'vendor said no' });
  assert.equal(failed.attempts, 1);
});
