import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AllowedPorts } from './allowed-ports.js';

test('80 and 443 always; the operator adds more', () => {
  assert.deepEqual(new AllowedPorts().list(), [80, 443]);
  const more = AllowedPorts.parse(['8080', ' 25', '', '443']);
  assert.deepEqual(more.list(), [25, 80, 443, 8080]);
  assert.ok(more.has(25));
  assert.ok(!more.has(22));
});

test('anything but a port number is refused, naming the entry', () => {
  for (const entry of ['0', '65536', 'smtp', '25-30', '-1', '8080/tcp', '1e3']) {
    assert.throws(
      () => AllowedPorts.parse([entry]),
      /BROWSER_ALLOWED_PORTS: ".*" is not a port number/,
      entry,
    );
  }
});
