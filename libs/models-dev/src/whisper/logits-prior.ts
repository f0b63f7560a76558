// Why the tiny Whisper's logits are not just `LayerNorm(h) · Eᵀ`.
//
// With random weights, greedy decoding picks `<|endoftext|>` about as rarely as any other token,
// and Transformers.js's Whisper decoding then does slow or degenerate things: a window that never
// ends runs to max_length (448 tokens), and timestamp mode (a "seek" loop) decodes the rest of a
// window again after every timestamp pair it did not close — with random timestamps many passes,
// and when the pair sits at <|0.00|>, passes without end. Random text also picks lone UTF-8
// bytes, which print as U+FFFD.
//
// So the text stays random, but the *structure* of the output follows a fixed prior added to the
// logits, shaped like real Whisper output: `<|0.00|> text … <|t|><|t|> text … <|t_end|>
// <|endoftext|>`. It is a small subgraph of the decoder — a function of each token's position and
// of whether it is a timestamp — plus the constant `final_logits_bias`. It leans on the rules of
// WhisperTimeStampLogitsProcessor, which emits a timestamp when the probability mass of all
// timestamps together beats the best text token, forbids text right after a lone timestamp, and
// forbids a third timestamp after a pair:
//
// - After a text token the timestamps' log-mass is SEGMENT_LOG_MASS, so a segment ends wherever
//   the text logits (random, ≈ N(0, 1) each) all fall below it, and at the latest on every
//   SEGMENT_TOKENS-th position, where the mass is raised by SEGMENT_BOOST. `<|endoftext|>` stays
//   below the mass, so in timestamp mode it never directly follows text.
// - After a timestamp that closed a segment, another timestamp is likelier than `<|endoftext|>`
//   (a pair: the next segment starts) — until the window's planned length (one token per
//   STEPS_PER_TOKEN · 20 ms of audio: WINDOW_TOKENS for a full 30-s window); then
//   `<|endoftext|>` wins instead, and the timestamp mass after text grows by CLOSING_SLOPE per
//   token, so the window is closed by `… text <|t_end|> <|endoftext|>` within a few tokens. That
//   ending makes Transformers.js move on to the next window after one decoding pass.
// - Which timestamp: the one for the token's position — 0.6 s per token, never past the end of
//   the audio (the encoder zeroes its output after the end; see encoder.ts) — so timestamps
//   increase, a pair repeats one time, and the last timestamp is where the audio ends. The mass is
//   spread over a bump of TIMESTAMP_WIDTH steps so that no single timestamp ever outranks
//   `<|endoftext|>`: with `<|notimestamps|>` prompts (no timestamp processor) the output is text,
//   then `<|endoftext|>` a few tokens after the planned length.
// Every window therefore ends after about its planned length, whatever the seed or the audio.
// Positions count from the usual three-token prompt; a longer prompt (`prompt_ids`) shortens the
// window accordingly.
//
// The output projection stays tied to the token embeddings, as in Whisper; the rows of
// `<|endoftext|>` and of the timestamps are zero, so the prior alone scores those tokens.
import type { Graph } from '../onnx/graph.js';
import * as op from '../onnx/ops.js';
import { DataType, floatTensor, int64Tensor } from '../onnx/tensor.js';
import type { Random } from '../random.js';
import { byteToChar } from '../tokenizer/byte-level.js';
import { TIMESTAMP_COUNT, type WhisperTokenIds } from './tokens.js';

/**
 * The ids the prior and the output layer depend on: where text ends, where timestamps begin and
 * the vocabulary size. Any Whisper vocabulary has them (the project's tiny one or a published one).
 */
export type StructureIds = Pick<WhisperTokenIds, 'endOfText' | 'timestampBegin' | 'end'>;

/** Timestamp steps (20 ms each) per generated token: time advances 0.6 s per token. */
export const STEPS_PER_TOKEN = 30;
/** Tokens a full 30-s window is planned to hold after the prompt; shorter audio plans fewer. */
export const WINDOW_TOKENS = (TIMESTAMP_COUNT - 1) / STEPS_PER_TOKEN;
/** A segment is closed at the latest on every this-many-th position (unless a timestamp is there). */
export const SEGMENT_TOKENS = 12;
/**
 * Position of the last prompt token in the multilingual `<|startoftranscript|> <|lang|> <|task|>`
 * prompt; an English-only model's prompt is `<|startoftranscript|>` alone (position 0).
 */
export const PROMPT_END = 2;
/** Log-mass of all timestamps after a text token; raised by SEGMENT_BOOST on segment positions. */
const SEGMENT_LOG_MASS = 2;
const SEGMENT_BOOST = 3;
/** `<|endoftext|>` sits this far below the timestamp mass after text. */
const EOS_BELOW_MASS = 1;
/** How fast both grow per token past the planned length. */
const CLOSING_SLOPE = 1;
/** Timestamp log-mass after a timestamp: above `<|endoftext|>` (a pair), then far below it. */
const PAIR_LOG_MASS = 5;
const CLOSED_LOG_MASS = -10;
const EOS_AFTER_TIMESTAMP = 0;
/**
 * Standard deviation, in timestamp steps, of the bump around the position's time. Its log-width
 * log(w√2π) ≈ 4.5 must exceed SEGMENT_BOOST + EOS_BELOW_MASS, so the best single timestamp stays
 * below `<|endoftext|>` even on segment positions.
 */
const TIMESTAMP_WIDTH = 36;
/** For tokens that are never generated: prompt-only tokens and unreadable raw bytes. */
const NEVER = -30;

/**
 * Tied token embeddings [vocab, dModel]: N(0, 1/dModel) rows, so that a LayerNorm output (norm
 * √dModel) gives text logits ≈ N(0, 1); the rows of `<|endoftext|>` and the timestamps are zero.
 */
export function tokenEmbeddings(rng: Random, ids: StructureIds, dModel: number): Float32Array {
  const table = rng.normals(ids.end * dModel, 1 / Math.sqrt(dModel));
  table.fill(0, ids.endOfText * dModel, (ids.endOfText + 1) * dModel);
  table.fill(0, ids.timestampBegin * dModel);
  return table;
}

/** Whether a byte-level token decodes to printable ASCII only (space included). */
function readable(token: string, charToByte: ReadonlyMap<string, number>): boolean {
  return [...token].every((ch) => {
    const b = charToByte.get(ch);
    return b !== undefined && b >= 0x20 && b <= 0x7e;
  });
}

/**
 * The constant part, `final_logits_bias` [vocab]: prompt-only special tokens and text tokens
 * that are not printable ASCII (lone UTF-8 bytes, control characters) are never generated.
 */
export function finalLogitsBias(textTokens: readonly string[], ids: StructureIds): Float32Array {
  const charToByte = new Map(byteToChar().map((ch, b) => [ch, b]));
  const bias = new Float32Array(ids.end);
  textTokens.forEach((token, id) => {
    if (!readable(token, charToByte)) bias[id] = NEVER;
  });
  bias.fill(NEVER, ids.endOfText + 1, ids.timestampBegin);
  return bias;
}

/**
 * Where the window's audio ends, in 20-ms timestamp steps, as [batch, 1, 1]: the index of the
 * last encoder position that is not all zeros (the encoder zeroes the positions after the end).
 * Position p holds frames 2p and 2p + 1, and the frame at the last sample is still audible, so
 * the index is the audio's length to within a step.
 */
function audioEnd(g: Graph, encoderStates: string): string {
  const audible = op.cast(
    g,
    op.greater(g, op.reduceMax(g, op.abs(g, encoderStates), [2], false), op.scalar(g, 0)),
    DataType.FLOAT,
  ); // [b, enc]
  const index = op.cast(g, op.range(g, op.ints(g, 0), op.dim(g, encoderStates, 1)), DataType.FLOAT);
  return op.unsqueeze(g, op.reduceMax(g, op.mul(g, audible, index), [1]), [2]);
}

/**
 * The position-dependent part, [batch, seq, vocab]. `positions` are the tokens' positions
 * (int64 [seq]); `inputIds` [batch, seq] tells which tokens are timestamps; `encoderStates`
 * where the audio ends; `promptEnd` the position of the prompt's last token.
 */
export function structurePrior(
  g: Graph,
  inputIds: string,
  positions: string,
  encoderStates: string,
  ids: StructureIds,
  promptEnd = PROMPT_END,
): string {
  const f = (v: number): string => op.scalar(g, v);
  const fromPromptEnd = op.sub(g, positions, op.ints(g, promptEnd)); // int64 [seq]
  const onSegmentEnd = op.equal(g, op.mod(g, fromPromptEnd, op.ints(g, SEGMENT_TOKENS)), op.ints(g, 0));
  const generated = op.unsqueeze(g, op.cast(g, fromPromptEnd, DataType.FLOAT), [0, 2]); // [1, seq, 1]
  const isTimestamp = op.unsqueeze(
    g,
    op.greaterOrEqual(g, inputIds, g.constant(int64Tensor([ids.timestampBegin], []))),
    [2],
  ); // [batch, seq, 1]
  const audio = audioEnd(g, encoderStates); // [batch, 1, 1]
  const planned = op.ceil(g, op.div(g, audio, f(STEPS_PER_TOKEN)));

  const beyond = op.sub(g, generated, planned); // < 0 inside the plan; [batch, seq, 1]
  const closing = op.add(g, op.mul(g, op.relu(g, beyond), f(CLOSING_SLOPE)), f(SEGMENT_LOG_MASS));
  const boost = op.unsqueeze(g, op.where(g, onSegmentEnd, f(SEGMENT_BOOST), f(0)), [0, 2]);
  const massAfterText = op.add(g, closing, boost);
  const massAfterTimestamp = op.where(
    g,
    op.greaterOrEqual(g, beyond, f(0)),
    f(CLOSED_LOG_MASS),
    f(PAIR_LOG_MASS),
  );
  const mass = op.where(g, isTimestamp, massAfterTimestamp, massAfterText); // [batch, seq, 1]
  const eos = op.where(g, isTimestamp, f(EOS_AFTER_TIMESTAMP), op.sub(g, closing, f(EOS_BELOW_MASS)));

  // The time of a position, up to the end of the audio; a timestamp after a timestamp repeats it.
  const ownPosition = op.sub(g, generated, op.cast(g, isTimestamp, DataType.FLOAT));
  const centre = op.min(g, op.relu(g, op.mul(g, ownPosition, f(STEPS_PER_TOKEN))), audio); // [batch, seq, 1]
  // Timestamp k scores mass − log Z − (k − centre)² / 2w², where Z = Σ exp(−k²/2w²) ≈ w√(2π).
  const logZ = Math.log(TIMESTAMP_WIDTH * Math.sqrt(2 * Math.PI));
  const vocab = ids.end;
  const index = new Float32Array(vocab);
  const isTimestampId = new Float32Array(vocab);
  for (let k = 0; k < TIMESTAMP_COUNT; k++) {
    index[ids.timestampBegin + k] = k;
    isTimestampId[ids.timestampBegin + k] = 1;
  }
  const distance = op.sub(g, g.constant(floatTensor(index, [vocab])), centre); // [batch, seq, vocab]
  const bump = op.mul(g, op.mul(g, distance, distance), f(-1 / (2 * TIMESTAMP_WIDTH ** 2)));
  const timestamps = op.mul(
    g,
    op.add(g, bump, op.sub(g, mass, f(logZ))),
    g.constant(floatTensor(isTimestampId, [vocab])),
  );
  const eosOneHot = new Float32Array(vocab);
  eosOneHot[ids.endOfText] = 1;
  return op.add(g, timestamps, op.mul(g, eos, g.constant(floatTensor(eosOneHot, [vocab]))));
}
