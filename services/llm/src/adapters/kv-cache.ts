// KV caches of a decoder-only ONNX export (Optimum's layout: inputs `input_ids`, `attention_mask`,
// `past_key_values.<layer>.key|value` of shape [batch, kv heads, positions, head dim], outputs
// `logits` and `present.<layer>.key|value`) for one prompt being read, and for the batch of
// sequences decoding together.
//
// The batch keeps its rows right-aligned: every row ends at the last position, shorter rows are
// padded on the left and their padding is masked out (attention_mask 0), so one step appends one
// column for every row. Joining, leaving and trimming the padding no row needs copy the rows
// into new tensors; each costs one pass over the cache, rare next to the steps.
import { Tensor } from '@huggingface/transformers';
import type { DecodeBatch, PrefillSequence } from '../generation/model.js';

export type CacheTensors = Record<string, Tensor>;

/**
 * One pass of the model (Transformers.js's `forward`). Without `position_ids` it derives them
 * from the mask, one BigInt at a time over rows × every cached position: at 16 rows and a few
 * thousand positions that is milliseconds per step, so a step passes its own (one per row).
 * Inputs the export does not declare are dropped by Transformers.js.
 */
export type Forward = (inputs: {
  input_ids: Tensor;
  attention_mask: Tensor;
  /** null for a first pass: Transformers.js then feeds zero-length caches. */
  past_key_values: CacheTensors | null;
  position_ids?: Tensor;
  /**
   * 1: only the last position's logits (exports that declare it). A prompt's pass otherwise
   * computes logits for every position: rows × positions × vocabulary floats, 400 MB for 8 prompts
   * of 100 tokens at a 128k vocabulary, when only the last position is sampled.
   */
  num_logits_to_keep?: Tensor;
}) => Promise<Record<string, Tensor>>;

const lastLogitOnly = () => new Tensor('int64', [1n], []);

const CACHE_INPUT = /^past_key_values\.\d+\.(key|value)$/;

/** The outputs' `present.*` as the next pass's `past_key_values.*`; anything else is refused. */
function nextCache(outputs: Record<string, Tensor>): CacheTensors {
  const cache: CacheTensors = {};
  for (const [name, tensor] of Object.entries(outputs)) {
    if (!name.startsWith('present')) continue;
    const past = name.replace(/^present/, 'past_key_values');
    // Recurrent or convolution states (Mamba, LFM2, …) are not position-indexed: rows of
    // different lengths could not be padded into one batch.
    if (!CACHE_INPUT.test(past) || tensor.dims.length !== 4) {
      throw new Error(
        `cache output ${name} ${JSON.stringify(tensor.dims)}: only [batch, heads, positions, dim] caches can be batched`,
      );
    }
    cache[past] = tensor;
  }
  return cache;
}

/** Logits as float32 (fp16 exports return fp16, the sampler works in fp32), one row per sequence. */
function lastLogits(outputs: Record<string, Tensor>, rows: number): Float32Array[] {
  let logits = outputs.logits!;
  if (logits.type !== 'float32') logits = logits.to('float32');
  const data = logits.data as Float32Array;
  const [, positions, vocab] = logits.dims as [number, number, number];
  return Array.from({ length: rows }, (_, row) => {
    const end = (row * positions + positions) * vocab;
    // A view, not a copy (a copy is 8 MB per step at 16 rows of 128k): the loop samples every
    // row before the next pass and keeps none, so the output buffer is freed right after.
    return data.subarray(end - vocab, end);
  });
}

const ones = (count: number) => new BigInt64Array(count).fill(1n);

/** One row's cache: the tensors of a batch of one, and how many positions it holds. */
interface RowCache {
  readonly cache: CacheTensors;
  readonly length: number;
}

export class PromptPrefill implements PrefillSequence {
  private cache: CacheTensors = {};
  private fed = 0;

  constructor(private readonly forward: Forward) {}

  get length(): number {
    return this.fed;
  }

  /** The cache once the whole prompt is read (for DecodeBatch.add). */
  get row(): RowCache {
    return { cache: this.cache, length: this.fed };
  }

  async feed(ids: readonly number[]): Promise<Float32Array> {
    const total = this.fed + ids.length;
    const outputs = await this.forward({
      input_ids: new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]),
      attention_mask: new Tensor('int64', ones(total), [1, total]),
      past_key_values: this.fed === 0 ? null : this.cache,
      num_logits_to_keep: lastLogitOnly(),
    });
    this.cache = nextCache(outputs);
    this.fed = total;
    return lastLogits(outputs, 1)[0]!;
  }
}

/**
 * Copies rows into a new [rows, heads, width, dim] tensor, each right-aligned: its last
 * min(width, its width) positions land in the last positions. Sources are tensors of the same
 * layer with any batch size and width.
 */
function gatherRows(sources: readonly { tensor: Tensor; row: number }[], width: number): Tensor {
  const [, heads, , dim] = sources[0]!.tensor.dims as [number, number, number, number];
  const first = sources[0]!.tensor;
  const ArrayType = (first.data as Float32Array).constructor as new (length: number) => Float32Array;
  const out = new ArrayType(sources.length * heads * width * dim);
  sources.forEach(({ tensor, row }, target) => {
    const from = tensor.data as Float32Array;
    const sourceWidth = tensor.dims[2]!;
    const keep = Math.min(width, sourceWidth) * dim;
    for (let head = 0; head < heads; head++) {
      const sourceEnd = ((row * heads + head) * sourceWidth + sourceWidth) * dim;
      const targetEnd = ((target * heads + head) * width + width) * dim;
      out.set(from.subarray(sourceEnd - keep, sourceEnd), targetEnd - keep);
    }
  });
  return new Tensor(first.type, out, [sources.length, heads, width, dim]);
}

export class KvBatch implements DecodeBatch {
  private cache: CacheTensors = {};
  /** Positions each row holds; the cache is as wide as the longest. */
  private lengths: number[] = [];

  /**
   * `firstPosition`: the position id of a sequence's first token (0; 1 for the few model types
   * Transformers.js numbers from 1), so a step's position ids are the ones it would derive.
   */
  constructor(
    private readonly forward: Forward,
    private readonly firstPosition = 0,
  ) {}

  get size(): number {
    return this.lengths.length;
  }

  get cachedTokens(): number {
    return this.size * this.width;
  }

  private get width(): number {
    return this.lengths.length === 0 ? 0 : Math.max(...this.lengths);
  }

  async join(prompts: readonly (readonly number[])[]): Promise<Float32Array[]> {
    const rows = prompts.length;
    const width = Math.max(...prompts.map((ids) => ids.length));
    // Left-padded like the batch's rows: the padding is masked out and every last position is real.
    const ids = new BigInt64Array(rows * width);
    const mask = new BigInt64Array(rows * width);
    prompts.forEach((prompt, row) => {
      const start = (row + 1) * width - prompt.length;
      ids.set(BigInt64Array.from(prompt, BigInt), start);
      mask.fill(1n, start, (row + 1) * width);
    });
    const outputs = await this.forward({
      input_ids: new Tensor('int64', ids, [rows, width]),
      attention_mask: new Tensor('int64', mask, [rows, width]),
      past_key_values: null,
      num_logits_to_keep: lastLogitOnly(),
    });
    const joining = nextCache(outputs);
    const existing = this.lengths.length;
    this.cache = this.regather(
      (name) => [
        ...Array.from({ length: existing }, (_, row) => ({ tensor: this.cache[name]!, row })),
        ...prompts.map((_, row) => ({ tensor: joining[name]!, row })),
      ],
      Math.max(this.width, width),
      Object.keys(joining),
    );
    this.lengths.push(...prompts.map((prompt) => prompt.length));
    return lastLogits(outputs, rows);
  }

  add(sequence: PrefillSequence): void {
    if (!(sequence instanceof PromptPrefill)) throw new Error('a KvBatch takes its own PromptPrefill');
    const joining = sequence.row;
    const width = Math.max(this.width, joining.length);
    this.cache = this.regather(
      (name) => [
        ...this.lengths.map((_, row) => ({ tensor: this.cache[name]!, row })),
        { tensor: joining.cache[name]!, row: 0 },
      ],
      width,
      Object.keys(joining.cache),
    );
    this.lengths.push(joining.length);
  }

  remove(row: number): void {
    this.lengths.splice(row, 1);
    if (this.lengths.length === 0) {
      this.cache = {};
      return;
    }
    // Also drops the left columns that were padding for every row left.
    this.cache = this.regather(
      (name) => this.lengths.map((_, i) => ({ tensor: this.cache[name]!, row: i < row ? i : i + 1 })),
      this.width,
      Object.keys(this.cache),
    );
  }

  async step(tokens: readonly number[]): Promise<Float32Array[]> {
    const rows = this.size;
    if (tokens.length !== rows) throw new Error(`${tokens.length} tokens for ${rows} rows`);
    const width = this.width + 1;
    // Each row's padding masked out: row r attends to its own last lengths[r] positions + the new one.
    const mask = new BigInt64Array(rows * width);
    this.lengths.forEach((length, row) => mask.fill(1n, (row + 1) * width - length - 1, (row + 1) * width));
    // The new token's position is the count of the row's real tokens before it.
    const positions = BigInt64Array.from(this.lengths, (length) => BigInt(this.firstPosition + length));
    const outputs = await this.forward({
      input_ids: new Tensor('int64', BigInt64Array.from(tokens, BigInt), [rows, 1]),
      attention_mask: new Tensor('int64', mask, [rows, width]),
      past_key_values: this.cache,
      position_ids: new Tensor('int64', positions, [rows, 1]),
    });
    this.cache = nextCache(outputs);
    this.lengths = this.lengths.map((length) => length + 1);
    return lastLogits(outputs, rows);
  }

  dispose(): Promise<void> {
    // Frees device-side cache tensors (CPU tensors belong to the GC).
    for (const tensor of Object.values(this.cache)) if (tensor.location === 'gpu-buffer') tensor.dispose();
    this.cache = {};
    this.lengths = [];
    return Promise.resolve();
  }

  private regather(
    sourcesOf: (name: string) => { tensor: Tensor; row: number }[],
    width: number,
    names: string[],
  ): CacheTensors {
    return Object.fromEntries(names.map((name) => [name, gatherRows(sourcesOf(name), width)]));
  }
}
