import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createSwitchboardClient } from '@switchboard/client';
import { freePort } from '@switchboard/devcluster';
import { repoRoot } from '../support/gateway.js';
import { descendants, isRunning, spawnNode } from '../support/processes.js';
import { until } from '../support/stack.js';
import { localClusterEnv } from '../support/local-cluster-env.js';

const ADMIN_TOKEN = 'e2e-healing-admin-token-0123456789';

/**
 * The runner's own children, each by what it is: `gateway@127.0.0.1`, `llm@127.0.0.3` (a
 * service and the address it listens on), `nats-server`, `postgres`, … — with its pid.
 */
function childrenOf(runner: number): Map<string, number> {
  const found = new Map<string, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, parent] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(parent) !== runner || state === 'Z') continue;
      const service = /services\/([^/]+)\/dist\/main\.js/.exec(
        readFileSync(`/proc/${entry}/cmdline`, 'utf8'),
      )?.[1];
      if (service === undefined) {
        found.set(readFileSync(`/proc/${entry}/comm`, 'utf8').trim(), Number(entry));
        continue;
      }
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      const host =
        env.find((v) => v.startsWith('GRPC_HOST='))?.slice(10) ??
        env.find((v) => v.startsWith('GATEWAY_HOST='))?.slice(13);
      found.set(`${service}@${host}`, Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** One of a process's environment variables, read from /proc. */
function envOf(pid: number, name: string): string | undefined {
  return readFileSync(`/proc/${pid}/environ`, 'utf8')
    .split('\0')
    .find((v) => v.startsWith(`${name}=`))
    ?.slice(name.length + 1);
}

async function query(base: string, key: string): Promise<Response> {
  return fetch(`${base}/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'Once upon a time', max_tokens: 4 }),
  }).catch(() => new Response(null, { status: 599 }));
}

/** Generations a replica finished, from its own metrics. */
async function llmRequests(metricsUrl: string): Promise<number> {
  const page = await fetch(metricsUrl).then(
    (r) => r.text(),
    () => '',
  );
  return page
    .split('\n')
    .filter((line) => line.startsWith('llm_requests_total{'))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

test(
  'the runner restarts a killed worker replica and a killed gateway in place, after a 10 s back-off, touching nothing else',
  { timeout: 300_000 },
  async (t) => {
    const port = await freePort();
    const stateDir = mkdtempSync(join(tmpdir(), 'sb-healing-'));
    const cluster = spawnNode('local cluster', join(repoRoot, 'libs/devcluster/dist/main.js'), {
      cwd: repoRoot,
      outputLimit: Infinity,
      env: localClusterEnv(stateDir, port, {
        ADMIN_TOKEN,
        // Two llm replicas and the gateway are enough to show it; local-cluster.test.ts starts all.
        SWITCHBOARD_WORKERS: 'llm',
        SWITCHBOARD_REPLICAS: 'llm=2',
      }),
    });
    const runner = cluster.child;
    t.after(async () => {
      if (runner.exitCode === null && runner.signalCode === null) runner.kill('SIGINT');
      await cluster.exited;
      rmSync(stateDir, { recursive: true, force: true });
    });
    const output = () => cluster.output();
    await until(
      () => {
        assert.equal(runner.exitCode, null, `runner exited:\n${output()}`);
        return output().includes('[switchboard] ready:');
      },
      'the runner is ready',
      150_000,
    ).catch((error: Error) => assert.fail(`${error.message}:\n${output()}`));
    // `llm ×2 at llm.switchboard.local:<port> → 127.0.0.2, 127.0.0.3`, oldest (llm-1) first.
    const hosts = /llm ×2 at \S+ → (\S+), (\S+)/.exec(output());
    assert.ok(hosts, output());
    const llm2Host = hosts[2]!;

    const base = `http://127.0.0.1:${port}`;
    const admin = createSwitchboardClient({ baseUrl: base, adminToken: ADMIN_TOKEN });
    const created = await admin.POST('/admin/api/keys', { body: { name: 'healing', tier: 'enterprise' } });
    assert.equal(created.response.status, 201, JSON.stringify(created.error));
    const key = created.data!.key;
    assert.equal((await query(base, key)).status, 200);
    const before = childrenOf(runner.pid!);
    const llm2 = before.get(`llm@${llm2Host}`);
    const gateway = before.get('gateway@127.0.0.1');
    assert.ok(llm2 !== undefined && gateway !== undefined, JSON.stringify([...before]));
    assert.ok(before.size >= 6, `3 brokers, 2 llm replicas and the gateway: ${JSON.stringify([...before])}`);

    /** Every child but `except` still has the pid it had; `except` runs again under a new pid. */
    const othersUntouched = (except: string, was: number) => {
      const now = childrenOf(runner.pid!);
      for (const [name, pid] of before) {
        if (name === except) continue;
        assert.equal(now.get(name), pid, `${name} was not restarted: ${JSON.stringify([...now])}`);
      }
      const again = now.get(except);
      assert.ok(again !== undefined && again !== was, `${except} runs again under a new pid`);
      return again;
    };

    // A worker replica crashes: it alone comes back, on its own address, after 10 s.
    process.kill(llm2, 'SIGKILL');
    await until(() => output().includes('[switchboard] llm-2 restarted'), 'llm-2 is restarted', 90_000).catch(
      (error: Error) => assert.fail(`${error.message}:\n${output().slice(-4000)}`),
    );
    assert.match(
      output(),
      /\[switchboard\] llm-2 exited \(signal SIGKILL\); restarting in 10 s \(restart 1\)/,
    );
    const llm2Again = othersUntouched(`llm@${llm2Host}`, llm2);
    before.set(`llm@${llm2Host}`, llm2Again);
    // It rejoins the worker's name: the gateway's calls reach the new process.
    const metrics = `http://127.0.0.1:${envOf(llm2Again, 'METRICS_PORT')}/metrics`;
    await until(
      async () => {
        await Promise.all([query(base, key), query(base, key)]);
        return (await llmRequests(metrics)) > 0;
      },
      'the restarted llm-2 serves calls through the gateway',
      60_000,
    );

    // The gateway crashes: it comes back on the same port, with the same keys.
    process.kill(gateway, 'SIGKILL');
    await until(
      () => output().includes('[switchboard] gateway restarted'),
      'the gateway is restarted',
      90_000,
    ).catch((error: Error) => assert.fail(`${error.message}:\n${output().slice(-4000)}`));
    assert.match(
      output(),
      /\[switchboard\] gateway exited \(signal SIGKILL\); restarting in 10 s \(restart 1\)/,
    );
    othersUntouched('gateway@127.0.0.1', gateway);
    const models = (await (
      await fetch(`${base}/models`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as { data: { capability: string; status: string }[] };
    assert.ok(
      models.data.some((m) => m.capability === 'llm' && m.status === 'ready'),
      JSON.stringify(models),
    );
    await until(async () => (await query(base, key)).status === 200, 'a call succeeds again', 30_000);
    assert.doesNotMatch(output(), /stopping every process/, 'the runner kept running');

    // Ctrl-C still stops everything, the restarted processes included.
    const children = descendants(runner.pid!);
    runner.kill('SIGINT');
    const [code] = await cluster.exited;
    assert.equal(code, 0, output().slice(-2000));
    for (let waited = 0; waited < 5000 && children.some(isRunning); waited += 100) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(children.filter(isRunning), [], 'no child process outlives the runner');
  },
);
