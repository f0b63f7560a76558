// What keeps the rows of one batched Whisper `generate` call independent, so that each row's tokens
// are exactly those its window gives alone. Transformers.js 4.3.1 runs a batch in lockstep and does
// not track finished rows: a row that has emitted <|endoftext|> keeps being sampled (nothing pads
// it) and the batch stops only when every row's *last* token is <|endoftext|> at the same step. So a
// finished row is held on <|endoftext|> (EndRows), which also ends a row whose caller left, and each
// row is cut after its first <|endoftext|> (rowTokens), as a lone call stops there.
import { LogitsProcessor, Tensor } from '@huggingface/transformers';

/**
 * Forces <|endoftext|> in row i once row i has ended (an <|endoftext|> after the prompt) or once
 * its caller's signal i has aborted. Placed after every other processor, so nothing undoes it; a
 * row still going is left untouched, so its logits are those a lone call sees.
 */
export class EndRows extends LogitsProcessor {
  constructor(
    private readonly signals: readonly AbortSignal[],
    private readonly promptLength: number,
    private readonly eosTokenIds: ReadonlySet<number>,
  ) {
    super();
  }

  override _call(inputIds: bigint[][], logits: Tensor): Tensor {
    const [eos] = this.eosTokenIds;
    for (let i = 0; i < inputIds.length; i++) {
      if (!this.signals[i]!.aborted && !this.ended(inputIds[i]!)) continue;
      const row = (logits as unknown as Tensor[])[i]!.data as Float32Array;
      row.fill(-Infinity);
      row[eos!] = 0;
    }
    return logits;
  }

  private ended(ids: readonly bigint[]): boolean {
    for (let j = this.promptLength; j < ids.length; j++) {
      if (this.eosTokenIds.has(Number(ids[j]))) return true;
    }
    return false;
  }
}

/**
 * A row of the batch's output as a lone call returns it: the prompt, the tokens generated, and the
 * first <|endoftext|> (absent when the row reached the length limit); the <|endoftext|> tokens
 * EndRows added while other rows went on are dropped.
 */
export function rowTokens(
  row: readonly bigint[],
  promptLength: number,
  eosTokenIds: ReadonlySet<number>,
): number[] {
  const tokens = row.map(Number);
  const end = tokens.findIndex((token, j) => j >= promptLength && eosTokenIds.has(token));
  return end < 0 ? tokens : tokens.slice(0, end + 1);
}

/** Log-mel features of single windows ([1, mel, frames] each) as one [B, mel, frames] input. */
export function stackFeatures(rows: readonly Tensor[]): Tensor {
  const [, mel, frames] = rows[0]!.dims as [number, number, number];
  const size = mel * frames;
  const data = new Float32Array(rows.length * size);
  rows.forEach((row, i) => {
    if (row.dims[1] !== mel || row.dims[2] !== frames)
      throw new Error('windows of one batch need equal features');
    data.set(row.data as Float32Array, i * size);
  });
  return new Tensor('float32', data, [rows.length, mel, frames]);
}
