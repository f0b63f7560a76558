// The batch's own position ids for a step are exactly the ones Transformers.js derives from the
// attention mask: rows of different lengths, left padding, rows leaving and joining.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { AutoModelForCausalLM, type PreTrainedModel, type Tensor } from '@huggingface/transformers';
import { useLocalModels } from '@switchboard/models';
import { buildTinyLlama } from '@switchboard/models-dev';
import { KvBatch, type Forward } from './kv-cache.js';

const root = await mkdtemp(join(tmpdir(), 'llm-kv-cache-'));
after(() => rm(root, { recursive: true, force: true }));
await buildTinyLlama(join(root, 'tiny'), { seed: 3 });
useLocalModels(root);
const loaded: PreTrainedModel = await AutoModelForCausalLM.from_pretrained('tiny', {
  local_files_only: true,
});
after(() => loaded.dispose());
const model = loaded as unknown as { forward: Forward };

test('a step passes the position ids Transformers.js would derive from the mask', async () => {
  const derived: Forward = ({ position_ids: _own, ...inputs }) => model.forward(inputs);
  const seen: Tensor[] = [];
  const own: Forward = (inputs) => {
    if (inputs.position_ids) seen.push(inputs.position_ids);
    return model.forward(inputs);
  };
  const batches = [new KvBatch(derived), new KvBatch(own)];
  const run = async (fn: (batch: KvBatch) => Promise<Float32Array[]> | void) => {
    const [a, b] = await Promise.all(batches.map(async (batch) => (await fn(batch)) ?? []));
    assert.deepEqual(b, a);
  };
  await run((batch) =>
    batch.join([
      [1, 40, 41, 42],
      [1, 50],
    ]),
  );
  for (let i = 0; i < 3; i++) await run((batch) => batch.step([60 + i, 70 + i]));
  await run((batch) => batch.remove(0));
  await run((batch) => batch.join([[1, 80, 81, 82, 83, 84, 85, 86]]));
  for (let i = 0; i < 3; i++) await run((batch) => batch.step([90 + i, 95 + i]));
  assert.equal(seen.length, 6);
  assert.deepEqual(seen.at(-1)!.data, BigInt64Array.from([7n, 10n]));
  await Promise.all(batches.map((batch) => batch.dispose()));
});
