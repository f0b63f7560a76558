// Each worker, and one of two gateway replicas, sent SIGTERM under a steady mix of every kind of
// call spread over both gateways (docs/scaling.md, "Draining"): every call it was running when the
// signal came ends well, it exits 0, and once started again it serves.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FaultCluster, FaultProcess, FaultWorker } from '../support/fault-cluster.js';
import { startLoadedCluster, type LoadedCluster } from '../support/loaded-cluster.js';
import {
  failedCleanly,
  loadRoutes,
  workerOfRoute,
  type CallRecord,
  type MixedLoad,
} from '../support/mixed-load.js';
import { until } from '../support/stack.js';

describe('SIGTERM of a worker or a gateway under mixed load', { timeout: 20 * 60_000 }, () => {
  let loaded: LoadedCluster | undefined;
  let c: FaultCluster;
  let load: MixedLoad;
  let explain: LoadedCluster['explain'];

  before(async () => {
    // A gateway's grace must outlast the longest call the load makes on a busy machine (a
    // transcription can take tens of seconds here): a call still open when it ends is cut.
    loaded = await startLoadedCluster({ gateways: 2, gatewayEnv: { SHUTDOWN_GRACE_MS: '45000' } });
    ({ cluster: c, load, explain } = loaded);
  });

  after(async () => {
    await loaded?.stop();
  });

  /**
   * Sends SIGTERM to `target` as soon as `running()` names calls it is running (at once when
   * `wanted` is 0), waits for its exit and starts it again. Returns those calls and the exit status.
   */
  async function drain(
    target: FaultProcess,
    running: () => CallRecord[] | Promise<CallRecord[]>,
    wanted = 1,
  ) {
    try {
      let open: CallRecord[] = [];
      await until(
        async () => (open = await running()).length >= wanted,
        `a call running on ${target.name}`,
        120_000,
      );
      const signalled = Date.now();
      const { code, signal } = await target.terminate();
      await target.start();
      return { open, signalled, code, signal };
    } finally {
      if (!target.running) await target.start();
    }
  }

  /**
   * The load's calls `worker` is running, by its own metrics: a call still on its way to it when the
   * signal comes is not its to finish (it is refused and, with no replica left, answered `503`).
   * The load keeps one call of a route open at a time, so a worker busy with a call and an open
   * call sent before it was asked are that call.
   */
  async function runningOn(worker: FaultWorker): Promise<CallRecord[]> {
    const asked = Date.now();
    const metric =
      worker.worker === 'animation' ? 'animation_jobs_running' : 'switchboard_grpc_calls_in_flight';
    // Summed over the series (animation's is one per backend); a worker not answering runs nothing.
    const busy = await worker.metric(metric).catch(() => 0);
    if (busy === 0) return [];
    return load.calls.filter(
      (call) => call.worker === worker.worker && call.end === undefined && call.start < asked,
    );
  }

  /** Waits until `calls` have all ended. */
  const untilEnded = (calls: CallRecord[]) =>
    until(() => calls.every((call) => call.end !== undefined), 'the drained calls ended', 180_000);

  for (const name of ['llm', 'whisper', 'diffusion', 'browser', 'animation'] as const) {
    it(`${name}: the calls it runs when told to stop all finish well`, async () => {
      const worker = c.worker(name);
      const { open, signalled, code, signal } = await drain(worker, () => runningOn(worker));
      assert.deepEqual([code, signal], [0, null], `${name} exit after SIGTERM:\n${worker.output()}`);
      await untilEnded(open);
      const failed = open.filter((call) => !call.ok);
      assert.deepEqual(failed, [], `${name} calls open at SIGTERM failed:\n${explain(failed)}`);
      // Meanwhile, with no replica left, new calls may be refused, but only with the clean answer
      // (and, once it is back, `model_loading` while it loads).
      const refused = load
        .inFlightDuring(signalled, Date.now(), name)
        .filter((call) => call.end !== undefined && !call.ok && !failedCleanly(call));
      assert.deepEqual(refused, [], `${name} calls refused badly:\n${explain(refused)}`);
      const others = load
        .inFlightDuring(signalled, Date.now())
        .filter((call) => call.worker !== name && call.end !== undefined && !call.ok);
      assert.deepEqual(others, [], `calls of other workers failed:\n${explain(others)}`);
      await load.untilSucceeded(
        1,
        120_000,
        loadRoutes.filter((route) => workerOfRoute[route] === name),
      );
    });
  }

  it('webhooks: the sender drains and exits 0', async () => {
    const sender = c.worker('webhooks');
    const { code, signal } = await drain(sender, () => [], 0);
    assert.deepEqual([code, signal], [0, null], `sender exit after SIGTERM:\n${sender.output()}`);
  });

  it('a gateway taken out of rotation finishes every call it runs, then exits 0', async () => {
    const [kept, stopped] = c.gateways as [FaultCluster['gateways'][0], FaultCluster['gateways'][0]];
    const openOnStopped = (at: number) =>
      load.inFlightDuring(at, at).filter((call) => call.gateway === stopped.url);
    await until(() => openOnStopped(Date.now()).length > 0, 'a call open on the gateway', 60_000);
    // As a load balancer does on a pod's termination: no new calls go to it, then it gets SIGTERM.
    load.useGateways([kept.url]);
    const { open, code, signal } = await drain(stopped, () => openOnStopped(Date.now()), 0);
    load.useGateways(c.gateways.map((g) => g.url));
    assert.ok(open.length > 0, 'no call was open on the gateway when the signal came');
    assert.deepEqual([code, signal], [0, null], `gateway exit after SIGTERM:\n${stopped.output()}`);
    await untilEnded(open);
    const failed = open.filter((call) => !call.ok);
    assert.deepEqual(failed, [], `calls open on the gateway at SIGTERM failed:\n${explain(failed)}`);
    // Started again on its port, it serves its share again.
    await until(
      () =>
        load.calls.some((call) => call.gateway === stopped.url && call.ok && call.start > Date.now() - 5000),
      'the restarted gateway served a call',
      60_000,
    );
  });
});
