// Test support for the tiny Whisper: seeded audio, and feeds for driving its ONNX sessions
// directly the way Transformers.js does (empty pasts first, then each step's presents).
import { Tensor } from 'onnxruntime-node';
import { Random } from '../random.js';
import type { WhisperShape } from './config.js';

export { int64, pastFrom, type Feeds } from '../testing.js';
import type { Feeds } from '../testing.js';

/**
 * `seconds` of 16 kHz mono audio: a few tones that switch on and off every second, plus
 * noise, so each window's features differ. The same seed gives the same samples.
 */
export function syntheticAudio(seconds: number, seed = 1, samplingRate = 16000): Float32Array {
  const rng = new Random(seed);
  const tones = [220, 440, 987, 1800].map((hz) => ({ hz, phase: rng.uniform() * 2 * Math.PI }));
  const out = new Float32Array(Math.round(seconds * samplingRate));
  for (let i = 0; i < out.length; i++) {
    const t = i / samplingRate;
    const second = Math.floor(t);
    let v = 0.02 * rng.normal();
    tones.forEach(({ hz, phase }, k) => {
      if ((second + k) % 3 !== 0) v += 0.15 * Math.sin(2 * Math.PI * hz * t + phase);
    });
    out[i] = v;
  }
  return out;
}

/** Zero-length past tensors for every cache input, as Transformers.js creates them. */
export function emptyPast(s: WhisperShape, batch: number): Feeds {
  const headDim = s.dModel / s.decoderHeads;
  const feeds: Feeds = {};
  for (let i = 0; i < s.decoderLayers; i++) {
    for (const kind of ['decoder.key', 'decoder.value', 'encoder.key', 'encoder.value']) {
      feeds[`past_key_values.${i}.${kind}`] = new Tensor('float32', new Float32Array(0), [
        batch,
        s.decoderHeads,
        0,
        headDim,
      ]);
    }
  }
  return feeds;
}

/** Logits [vocab] of position `pos` (default: the last) of batch row `row`, from [batch, seq, vocab]. */
export function logitsAt(logits: Tensor | undefined, row = 0, pos?: number): Float32Array {
  if (!logits) throw new Error('no logits output');
  const [, seq = 0, vocab = 0] = logits.dims;
  const data = logits.data as Float32Array;
  const start = (row * seq + (pos ?? seq - 1)) * vocab;
  return data.slice(start, start + vocab);
}

/** Index of the largest of `values[from … to)`. */
export function argmax(values: Float32Array, from = 0, to = values.length): number {
  let best = from;
  for (let i = from + 1; i < to; i++) if ((values[i] ?? -Infinity) > (values[best] ?? -Infinity)) best = i;
  return best;
}
