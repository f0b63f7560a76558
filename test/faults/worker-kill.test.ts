// Each worker killed outright (SIGKILL, as an OOM kill or a lost node would) under a steady mix of
// every kind of call, then started again where the gateways know it: the calls it was running fail
// with the documented clean error (docs/scaling.md: `503 unavailable`, or an error event in a
// stream already started; a browser session it held ends), nothing else fails, calls succeed again
// within 10 s of its restart, and animation jobs and their webhooks finish exactly once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import type { FaultCluster, FaultWorkerName } from '../support/fault-cluster.js';
import { startLoadedCluster, type LoadedCluster } from '../support/loaded-cluster.js';
import { failedCleanly, type MixedLoad } from '../support/mixed-load.js';
import { sleep, until } from '../support/stack.js';
import { registerEndpoint, startReceiver, type Receiver } from '../support/webhooks.js';

/** How soon after its restart a worker's calls must succeed again. */
const RECOVERY_MS = 10_000;

describe('SIGKILL of a worker under mixed load', { timeout: 20 * 60_000 }, () => {
  let loaded: LoadedCluster | undefined;
  let c: FaultCluster;
  let load: MixedLoad;
  let explain: LoadedCluster['explain'];
  let nc: NatsConnection | undefined;
  let receiver: Receiver | undefined;
  const succeededEvents = new Map<string, number>();

  before(async () => {
    const webhooks = await startReceiver();
    receiver = webhooks;
    // Every success event and delivery is watched from the first job on.
    loaded = await startLoadedCluster({}, {}, async (cluster) => {
      nc = await connect({ ...cluster.nats.connectOptions('operator'), maxReconnectAttempts: -1 });
      const sub = nc.subscribe('switchboard.events.animate.job.succeeded');
      void (async () => {
        for await (const msg of sub) {
          const { job_id: jobId } = JSON.parse(new TextDecoder().decode(msg.data)) as { job_id: string };
          succeededEvents.set(jobId, (succeededEvents.get(jobId) ?? 0) + 1);
        }
      })();
      await registerEndpoint(cluster.gateways[0]!, cluster.key.key, {
        url: webhooks.url,
        events: ['animate.job.succeeded'],
      });
    });
    ({ cluster: c, load, explain } = loaded);
  });

  after(async () => {
    await nc?.close();
    await loaded?.stop();
    await receiver?.close();
  });

  /** Kills `name` while one of its calls is open, starts it again; returns [killed, restarted]. */
  async function killAndRestart(name: FaultWorkerName): Promise<[number, number]> {
    const worker = c.worker(name);
    try {
      if (name !== 'webhooks') await load.untilInFlight(name);
      // A moment into the call, so the worker is working on it rather than about to receive it.
      await sleep(300);
      const killed = Date.now();
      await worker.kill();
      // Calls meet the dead worker meanwhile.
      await sleep(1500);
      await worker.start();
      return [killed, Date.now()];
    } finally {
      if (!worker.running) await worker.start();
    }
  }

  /** Waits until `count` calls of `worker` started after `t` have ended. */
  const untilEndedAfter = (worker: string, t: number, count: number) =>
    until(
      () =>
        load.startedAfter(t).filter((call) => call.worker === worker && call.end !== undefined).length >=
        count,
      `${count} ${worker} calls started after the recovery bound have ended`,
      180_000,
    );

  for (const name of ['llm', 'whisper', 'diffusion', 'browser', 'animation'] as const) {
    it(`${name}: its in-flight calls fail cleanly, nothing else fails, it serves again within 10 s`, async () => {
      const [killed, restarted] = await killAndRestart(name);
      const recovered = restarted + RECOVERY_MS;
      await untilEndedAfter(name, recovered, 2);
      const window = load.inFlightDuring(killed, Date.now()).filter((call) => call.end !== undefined);

      const othersFailed = window.filter((call) => call.worker !== name && !call.ok);
      assert.deepEqual(othersFailed, [], `calls of other workers failed:\n${explain(othersFailed)}`);

      const own = window.filter((call) => call.worker === name);
      const unclean = own.filter((call) => !call.ok && !failedCleanly(call));
      assert.deepEqual(unclean, [], `${name} calls failed without the clean error:\n${explain(unclean)}`);
      const late = own.filter((call) => !call.ok && call.start >= recovered);
      assert.deepEqual(late, [], `${name} calls still failing 10 s after its restart:\n${explain(late)}`);
      if (name === 'animation') {
        // The job the worker was running is redelivered, not lost: every job ends succeeded.
        const failedJobs = own.filter((call) => call.route === 'animate' && !call.ok);
        assert.deepEqual(failedJobs, [], `jobs did not survive the kill:\n${explain(failedJobs)}`);
      }
    });
  }

  it('webhooks: deliveries pending while the sender is dead are delivered after its restart', async () => {
    const [, restarted] = await killAndRestart('webhooks');
    // A job that ends while the sender is back, and those that ended while it was dead.
    await until(
      () => load.calls.some((call) => call.route === 'animate' && call.ok && call.end! > restarted),
      'a job finished after the sender came back',
      180_000,
    );
  });

  it('every job finished exactly once, and each success was delivered to its webhook', async () => {
    await load.stop();
    const jobs = load.calls.filter((call) => call.route === 'animate' && call.jobId !== undefined);
    assert.ok(jobs.length > 0, 'no animation jobs ran');
    const unfinished = jobs.filter((call) => !call.ok);
    assert.deepEqual(unfinished, [], `jobs that did not succeed:\n${explain(unfinished)}`);
    const ids = jobs.map((call) => call.jobId!);
    const delivered = () =>
      new Set(
        receiver!.requests.map((r) => (JSON.parse(r.body) as { data: { job_id: string } }).data.job_id),
      );
    await until(
      () => ids.every((id) => succeededEvents.has(id) && delivered().has(id)),
      'every succeeded job has its event and its delivery',
      30_000,
    );
    // A duplicate event would have arrived by now.
    await sleep(500);
    const twice = ids.filter((id) => succeededEvents.get(id) !== 1);
    assert.deepEqual(twice, [], 'jobs whose success event came more than once');
  });
});
