import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostResolver, joinHostPort, parseTarget } from './replica-resolver.js';

test('targets: host:port and [v6]:port; anything else is refused', () => {
  assert.deepEqual(parseTarget('llm.switchboard.svc:50051'), { host: 'llm.switchboard.svc', port: 50051 });
  assert.deepEqual(parseTarget('10.0.0.7:1'), { host: '10.0.0.7', port: 1 });
  assert.deepEqual(parseTarget('[fd00::1]:50051'), { host: 'fd00::1', port: 50051 });
  for (const bad of ['llm', 'llm:', ':50051', 'llm:0', 'llm:70000', 'fd00::1:50051', 'dns:///llm:1']) {
    assert.throws(() => parseTarget(bad), /not a host:port/, bad);
  }
  assert.equal(joinHostPort('fd00::1', 7), '[fd00::1]:7');
  assert.equal(joinHostPort('127.0.0.2', 7), '127.0.0.2:7');
});

test('an IP address resolves to itself; a name through the system resolver, /etc/hosts included', async () => {
  const resolve = hostResolver();
  assert.deepEqual(await resolve('127.0.0.9'), ['127.0.0.9']);
  assert.deepEqual(await hostResolver('127.0.0.1:1')('::1'), ['::1']);
  const local = await resolve('localhost');
  assert.ok(local.includes('127.0.0.1') || local.includes('::1'), local.join());
});
