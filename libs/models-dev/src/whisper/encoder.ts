// The audio encoder, `onnx/encoder_model.onnx`: log-mel features [batch, 80, 3000] → two
// convolutions (the second halves the frame rate to 1500 positions, 20 ms each) → fixed
// sinusoidal positions → pre-LN transformer layers → final LayerNorm → last_hidden_state.
import { Graph } from '../onnx/graph.js';
import { gelu } from '../onnx/layers.js';
import * as op from '../onnx/ops.js';
import { DataType, floatTensor } from '../onnx/tensor.js';
import { filled, normalWeight } from '../onnx/weights.js';
import type { Random } from '../random.js';
import { mlp, attentionOutput, keysValues, norm, residual, type BlockContext } from './blocks.js';
import { AUDIO, checkShape, type WhisperShape } from './config.js';

/**
 * Whisper's sinusoidal position table [length, channels]: sines of all frequencies in the first
 * half of each row, cosines in the second, timescales geometric from 1 to 10000.
 */
export function sinusoids(length: number, channels: number): Float32Array {
  const half = channels / 2;
  const increment = Math.log(10000) / (half - 1);
  const table = new Float32Array(length * channels);
  for (let pos = 0; pos < length; pos++) {
    for (let i = 0; i < half; i++) {
      const angle = pos * Math.exp(-increment * i);
      table[pos * channels + i] = Math.sin(angle);
      table[pos * channels + half + i] = Math.cos(angle);
    }
  }
  return table;
}

export function buildEncoderGraph(s: WhisperShape, rng: Random): Graph {
  checkShape(s);
  const g = new Graph('tiny_whisper_encoder');
  const d = s.dModel;
  const c: BlockContext = { g, rng, dModel: d, heads: s.encoderHeads, eps: s.layerNormEps };
  const features = g.input('input_features', DataType.FLOAT, ['batch_size', s.melBins, AUDIO.frames]);

  const conv = (name: string, x: string, inChannels: number, stride: number): string => {
    const w = normalWeight(g, rng, `${name}.weight`, [d, inChannels, 3], 1 / Math.sqrt(inChannels * 3));
    return gelu(g, op.conv1d(g, x, w, filled(g, `${name}.bias`, d, 0), { kernel: 3, stride, pad: 1 }));
  };
  const conv1 = conv('model.encoder.conv1', features, s.melBins, 1); // [b, d, 3000]
  const conv2 = conv('model.encoder.conv2', conv1, d, 2); // [b, d, 1500]
  const positions = g.initializer(
    'model.encoder.embed_positions.weight',
    floatTensor(sinusoids(s.maxSourcePositions, d), [s.maxSourcePositions, d]),
  );
  let x = op.add(g, op.transpose(g, conv2, [0, 2, 1]), positions); // [b, 1500, d]

  for (let i = 0; i < s.encoderLayers; i++) {
    const p = `model.encoder.layers.${i}`;
    x = g.scope(`layers.${i}`, () => {
      const attended = residual(c, `${p}.self_attn_layer_norm`, x, (h) =>
        attentionOutput(c, `${p}.self_attn`, h, keysValues(c, `${p}.self_attn`, h)),
      );
      return residual(c, `${p}.final_layer_norm`, attended, (h) => mlp(c, p, h, s.encoderFfnDim));
    });
  }
  const out = op.mul(
    g,
    norm(c, 'model.encoder.layer_norm', x),
    g.scope('audible', () => audible(g, features)),
  );
  g.output(out, 'last_hidden_state', DataType.FLOAT, ['batch_size', s.maxSourcePositions, d]);
  return g;
}

/**
 * 1 for each encoder position (two 10-ms frames) that holds audio, 0 for the feature
 * extractor's padding after the end of the audio, as [batch, 1500, 1]. Padding is silence, whose
 * log-mel frame is the clamped floor value in every bin; any real sound varies across bins.
 * Zeroing the encoder output there is how the decoder's structure prior learns where the audio
 * ends (see logits-prior.ts), so timestamps never run past it.
 */
function audible(g: Graph, features: string): string {
  const spread = op.sub(g, op.reduceMax(g, features, [1], false), op.reduceMin(g, features, [1], false)); // [b, 3000]
  const frames = op.cast(g, op.greater(g, spread, op.scalar(g, 1e-6)), DataType.FLOAT);
  const positions = op.reduceMax(g, op.reshape(g, frames, [0, AUDIO.frames / 2, 2]), [2]); // [b, 1500, 1]
  return positions;
}
