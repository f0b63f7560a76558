// Test support: drive a tiny Llama's ONNX session directly, the way a generation loop does,
// so tests can compare cached and uncached runs without any library in between.
import { Tensor, type InferenceSession } from 'onnxruntime-node';
import type { LlamaShape } from './config.js';

export { int64, pastFrom, type Feeds } from '../testing.js';
import { int64, type Feeds } from '../testing.js';

/** Zero-length past tensors, as Transformers.js creates them for the first step. */
export function emptyPast(s: LlamaShape, batch: number): Feeds {
  const feeds: Feeds = {};
  for (let i = 0; i < s.layers; i++) {
    for (const kind of ['key', 'value']) {
      feeds[`past_key_values.${i}.${kind}`] = new Tensor('float32', new Float32Array(0), [
        batch,
        s.kvHeads,
        0,
        s.headDim,
      ]);
    }
  }
  return feeds;
}

/** Logits of the last position of batch row `row`, from logits [batch, seq, vocab]. */
export function lastLogits(logits: Tensor | undefined, row = 0): Float32Array {
  if (!logits) throw new Error('no logits output');
  const [, seq = 0, vocab = 0] = logits.dims;
  const data = logits.data as Float32Array;
  const start = (row * seq + seq - 1) * vocab;
  return data.slice(start, start + vocab);
}

/** Index of the largest value, skipping `excluded` ids (as min_new_tokens masks EOS). */
export function argmax(values: Float32Array, excluded: readonly number[] = []): number {
  let best = -1;
  values.forEach((v, i) => {
    if (!excluded.includes(i) && (best < 0 || v > (values[best] ?? -Infinity))) best = i;
  });
  return best;
}

/** Greedy decoding that recomputes the whole sequence every step (no KV cache). */
export async function greedyWithoutCache(
  session: InferenceSession,
  s: LlamaShape,
  prompt: readonly number[],
  steps: number,
  excluded: readonly number[] = [],
): Promise<number[]> {
  const ids = [...prompt];
  for (let n = 0; n < steps; n++) {
    const out = await session.run({
      input_ids: int64([ids]),
      attention_mask: int64([ids.map(() => 1)]),
      position_ids: int64([ids.map((_, i) => i)]),
      ...emptyPast(s, 1),
    });
    ids.push(argmax(lastLogits(out['logits']), excluded));
  }
  return ids;
}
