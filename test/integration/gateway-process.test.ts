// The gateway as its own process, as production runs it: what only a process shows — a config
// error stops start-up with every bad variable named and no stack trace, and SIGTERM / SIGINT
// drain and exit 0. Route behaviour is tested in-process elsewhere (test/support/gateway.ts).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { repoRoot, spawnGateway } from '../support/gateway.js';
import { spawnNode } from '../support/processes.js';
import { startStack, type Stack } from '../support/stack.js';

let stack: Stack;
before(async () => {
  stack = await startStack({ gateways: 0 });
});
after(() => stack?.stop());

test('a config error stops start-up, naming every bad variable, without a stack trace', async () => {
  const gateway = spawnNode('gateway', join(repoRoot, 'services/gateway/dist/main.js'), {
    env: { PATH: process.env.PATH ?? '', CLUSTER_SECRET: 'short', GATEWAY_PORT: 'eighty' },
  });
  const [code] = await gateway.exited;
  const stderr = gateway.stderr();
  assert.equal(code, 1);
  for (const name of ['ADMIN_TOKEN', 'CLUSTER_SECRET', 'KEY_PEPPER', 'GATEWAY_PORT'])
    assert.match(stderr, new RegExp(name));
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal} drains and exits 0`, async () => {
    const gateway = await spawnGateway({ ...stack.gatewayEnv, LOG_LEVEL: 'info' });
    assert.equal((await fetch(`${gateway.url}/readyz`)).status, 200);
    const exited = once(gateway.child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    gateway.child.kill(signal);
    const [code] = await exited;
    assert.equal(code, 0, gateway.output());
    assert.match(gateway.output(), /"msg":"stopped"/);
    await assert.rejects(fetch(`${gateway.url}/readyz`), 'the port is closed');
  });
}
