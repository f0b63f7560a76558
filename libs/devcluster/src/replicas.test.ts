import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LoopbackAddresses } from './loopback.js';
import { parseReplicas } from './replicas.js';

const workers = ['llm', 'whisper', 'diffusion', 'browser'];

test('SWITCHBOARD_REPLICAS: unset or blank is the plain mode; listed workers get their counts', () => {
  assert.equal(parseReplicas(undefined, workers), undefined);
  assert.equal(parseReplicas('  ', workers), undefined);
  assert.deepEqual(
    parseReplicas('llm=3, diffusion=2,whisper=2,browser=2,', workers),
    new Map([
      ['llm', 3],
      ['diffusion', 2],
      ['whisper', 2],
      ['browser', 2],
    ]),
  );
});

test('SWITCHBOARD_REPLICAS: every bad entry is named in one error', () => {
  assert.throws(
    () => parseReplicas('llm=0,gpu=2,whisper,llm=2,diffusion=17,browser=x', workers),
    (error: Error) => {
      for (const part of [
        '"llm=0": the count must be 1 to 16',
        '"gpu" is not a worker (llm, whisper, diffusion, browser)',
        '"whisper" is not <worker>=<count>',
        '"diffusion=17": the count must be 1 to 16',
        '"browser=x" is not <worker>=<count>',
      ]) {
        assert.ok(error.message.includes(part), `${part} in: ${error.message}`);
      }
      return error.message.startsWith('SWITCHBOARD_REPLICAS="llm=0,');
    },
  );
  assert.throws(() => parseReplicas('llm=2,llm=3', workers), /"llm" is given twice/);
});

test('replica addresses: 127.0.0.2 onward, never .0 or .255, never twice', () => {
  const pool = new LoopbackAddresses();
  const taken = Array.from({ length: 600 }, () => pool.take());
  assert.deepEqual(taken.slice(0, 3), ['127.0.0.2', '127.0.0.3', '127.0.0.4']);
  assert.equal(taken[253], '127.0.1.1');
  assert.equal(new Set(taken).size, taken.length);
  assert.ok(taken.every((address) => !/\.(0|255)$/.test(address)));
});
