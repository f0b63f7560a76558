import assert from 'node:assert/strict';
import { promises as dns } from 'node:dns';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { canConnect, freePort, startCluster } from '@switchboard/devcluster';
import { waitForServing } from '@switchboard/grpc';
import { repoRoot } from '../support/gateway.js';
import { isRunning, spawnNode } from '../support/processes.js';
import { localClusterEnv } from '../support/local-cluster-env.js';

async function createKey(gatewayUrl: string, adminToken: string): Promise<string> {
  const res = await fetch(`${gatewayUrl}/admin/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'replicas', tier: 'enterprise' }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { key: string }).key;
}

/** `n` short completions at once through the gateway; every one must be answered. */
async function queries(gatewayUrl: string, key: string, n: number): Promise<void> {
  const answers = await Promise.all(
    Array.from({ length: n }, () =>
      fetch(`${gatewayUrl}/query`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'Once upon a time', max_tokens: 4 }),
      }),
    ),
  );
  for (const res of answers) assert.equal(res.status, 200, await res.text());
}

/** Generations a replica finished, from its own metrics. */
async function llmRequests(metricsUrl: string): Promise<number> {
  const page = await (await fetch(metricsUrl)).text();
  return page
    .split('\n')
    .filter((line) => line.startsWith('llm_requests_total{'))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

test('a bad SWITCHBOARD_REPLICAS stops the runner before it starts anything, naming the entry', async () => {
  const runner = spawnNode('local cluster', join(repoRoot, 'libs/devcluster/dist/main.js'), {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', SWITCHBOARD_REPLICAS: 'llm=0,gpu=2' },
  });
  const [code] = await runner.exited;
  const output = runner.output();
  assert.equal(code, 1, output);
  assert.match(output, /failed to start: SWITCHBOARD_REPLICAS="llm=0,gpu=2"/);
  assert.match(output, /"llm=0": the count must be 1 to 16/);
  assert.match(output, /"gpu" is not a worker/);
});

test(
  'SWITCHBOARD_REPLICAS=llm=2 runs two llm processes on their own loopback addresses behind one DNS name, scaled at run time',
  { timeout: 120_000 },
  async (t) => {
    const stateDir = mkdtempSync(join(tmpdir(), 'sb-replicas-'));
    const cluster = await startCluster({
      root: repoRoot,
      workers: ['llm'],
      env: localClusterEnv(stateDir, await freePort(), {
        SWITCHBOARD_REPLICAS: 'llm=2',
      }),
    });
    t.after(async () => {
      await cluster.stop();
      rmSync(stateDir, { recursive: true, force: true });
    });
    assert.ok(cluster.dnsServer, 'the runner serves DNS for the worker names');
    const resolver = new dns.Resolver({ timeout: 1000, tries: 2 });
    resolver.setServers([cluster.dnsServer]);
    const answer = async () => (await resolver.resolve4('llm.switchboard.local')).sort();

    const [first, second] = cluster.replicas('llm');
    assert.ok(
      first && second && cluster.replicas('llm').length === 2,
      JSON.stringify(cluster.replicas('llm')),
    );
    assert.deepEqual(
      [first.name, second.name],
      ['llm-1', 'llm-2'],
      'each replica is its own process with its own name in the logs',
    );
    assert.notEqual(first.pid, second.pid);
    for (const replica of [first, second]) {
      assert.match(replica.host, /^127\.0\.0\.\d+$/);
      assert.notEqual(replica.host, '127.0.0.1');
      assert.ok(cluster.processes.get(replica.name)?.running, replica.name);
      assert.equal(await waitForServing(replica.address, { timeoutMs: 5000 }), 'SERVING');
    }
    assert.notEqual(first.host, second.host);
    assert.equal(first.port, second.port, 'one port for every replica, as pods behind a headless Service');
    // Bound to their own addresses, not to every interface.
    assert.equal(await canConnect(first.port, '127.0.0.1'), false);
    assert.equal(cluster.workerAddresses.LLM_ADDR, `llm.switchboard.local:${first.port}`);
    assert.deepEqual(await answer(), [first.host, second.host].sort());

    // The gateway reaches both through the name.
    const key = await createKey(cluster.gatewayUrl, cluster.adminToken);
    const served = await Promise.all([first, second].map((r) => llmRequests(r.metricsUrl)));
    await queries(cluster.gatewayUrl, key, 8);
    for (const [i, replica] of [first, second].entries()) {
      assert.ok(
        (await llmRequests(replica.metricsUrl)) > served[i]!,
        `${replica.name} served some of the calls`,
      );
    }

    const removed = await cluster.removeReplica('llm');
    assert.equal(removed.name, 'llm-2');
    assert.deepEqual(await answer(), [first.host], 'the removed replica leaves the name');
    assert.equal(isRunning(removed.pid!), false);
    assert.equal(await canConnect(removed.port, removed.host), false);
    assert.equal(cluster.processes.has('llm-2'), false);
    await queries(cluster.gatewayUrl, key, 4);

    const added = await cluster.addReplica('llm');
    assert.equal(added.name, 'llm-3');
    assert.ok(![first.host, second.host].includes(added.host), 'a new replica gets a fresh address');
    assert.equal(added.port, first.port);
    assert.deepEqual(await answer(), [first.host, added.host].sort(), 'it joins the name once it serves');

    const pids = cluster.replicas('llm').map((r) => r.pid!);
    await cluster.stop();
    assert.deepEqual(pids.filter(isRunning), [], 'stop leaves no replica behind');
  },
);
