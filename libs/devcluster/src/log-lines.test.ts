import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lineFormatter } from './log-lines.js';

const json = JSON.stringify({ level: 30, time: 0, service: 'gateway', msg: 'gateway listening', port: 8080 });

test('off a terminal, lines pass through as JSON', () => {
  assert.equal(lineFormatter(false)('gateway', json), `[gateway] ${json}`);
});

test('on a terminal, JSON lines are pretty-printed and anything else is kept', () => {
  const format = lineFormatter(true);
  const pretty = format('gateway', json);
  assert.match(pretty, /^\[gateway\] .*INFO.*gateway listening/);
  assert.match(pretty, /port.*8080/);
  assert.ok(!pretty.includes('{"level"'), pretty);
  assert.equal(format('nats-server', '[1] Server is ready'), '[nats-server] [1] Server is ready');
  assert.equal(format('x', '{not json'), '[x] {not json');
});
