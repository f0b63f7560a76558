// CLIP's byte-level BPE tokenizer built from the two files diffusers ships with every Stable
// Diffusion export, tokenizer/vocab.json and tokenizer/merges.txt, for exports that have no
// tokenizer.json. It follows transformers' CLIPTokenizer: text cleaned (NFC, control characters
// dropped, CJK ideographs split apart, whitespace collapsed) and lower-cased; split into words
// by CLIP's pattern; each word's UTF-8 bytes mapped to GPT-2's printable byte characters, the
// last one marked with `</w>`, and merged by rank; then <|startoftext|> … <|endoftext|>, cut
// and padded to the model's length.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

const BOS = '<|startoftext|>';
const EOS = '<|endoftext|>';
/** CLIP's word pattern (transformers' CLIPTokenizer.pat), case-insensitive. */
const WORDS = /<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|\p{L}+|\p{N}|[^\s\p{L}\p{N}]+/giu;
/** CLIPTokenizer reads only this many merges (the BPE vocabulary of 49,152 less bytes and specials). */
const MAX_MERGES = 49152 - 256 - 2;

/** GPT-2's bytes_to_unicode: printable bytes stand for themselves, the rest move to U+0100 on. */
function byteCharacters(): string[] {
  const table: string[] = [];
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    table[b] = String.fromCodePoint(printable ? b : next++);
  }
  return table;
}
const BYTE_CHARACTERS = byteCharacters();

const isCjk = (cp: number): boolean =>
  (cp >= 0x4e00 && cp <= 0x9fff) ||
  (cp >= 0x3400 && cp <= 0x4dbf) ||
  (cp >= 0x20000 && cp <= 0x2a6df) ||
  (cp >= 0x2a700 && cp <= 0x2b73f) ||
  (cp >= 0x2b740 && cp <= 0x2b81f) ||
  (cp >= 0x2b820 && cp <= 0x2ceaf) ||
  (cp >= 0xf900 && cp <= 0xfaff) ||
  (cp >= 0x2f800 && cp <= 0x2fa1f);

/**
 * transformers' BasicTokenizer as CLIPTokenizer configures it (no accent stripping, no
 * punctuation split), then whitespace collapsed and lower-cased.
 */
export function cleanText(text: string): string {
  let out = '';
  for (const ch of text.normalize('NFC')) {
    const cp = ch.codePointAt(0)!;
    if (cp === 0 || cp === 0xfffd) continue;
    if (/\s/u.test(ch)) out += ' ';
    else if (/\p{Cc}|\p{Cf}/u.test(ch)) continue;
    else if (isCjk(cp)) out += ` ${ch} `;
    else out += ch;
  }
  return out.trim().split(/\s+/u).filter(Boolean).join(' ').toLowerCase();
}

export interface ClipTokenizerOptions {
  /** Prompts are cut and padded to this many ids (77 for every CLIP text encoder). */
  readonly maxLength: number;
  /** The padding token's text; CLIP uses <|endoftext|>, SD 2.x exports "!". */
  readonly padToken: string;
}

export class ClipBpeTokenizer {
  private readonly ranks: Map<string, number>;
  private readonly cache = new Map<string, string[]>();
  readonly bosId: number;
  readonly eosId: number;
  readonly padId: number;

  constructor(
    private readonly vocab: ReadonlyMap<string, number>,
    merges: readonly string[],
    readonly options: ClipTokenizerOptions,
  ) {
    this.ranks = new Map(merges.map((merge, rank) => [merge, rank]));
    const id = (token: string) => {
      const found = vocab.get(token);
      if (found === undefined) throw new Error(`tokenizer: vocab.json has no ${JSON.stringify(token)}`);
      return found;
    };
    this.bosId = id(BOS);
    this.eosId = id(EOS);
    this.padId = id(options.padToken);
  }

  /** Reads tokenizer/vocab.json, merges.txt and (for the padding token and length) its configs. */
  static async fromFolder(dir: string): Promise<ClipBpeTokenizer> {
    const vocabJson = JSON.parse(await readFile(join(dir, 'vocab.json'), 'utf8')) as Record<string, number>;
    const lines = (await readFile(join(dir, 'merges.txt'), 'utf8')).trim().split('\n');
    // The first line is "#version: …"; transformers skips it and reads at most MAX_MERGES.
    const merges = lines
      .slice(1, MAX_MERGES + 1)
      .map((line) => line.trim().split(/\s+/).join(' '))
      .filter((line) => line.includes(' '));
    const config = await optionalJson(join(dir, 'tokenizer_config.json'));
    const special = await optionalJson(join(dir, 'special_tokens_map.json'));
    const tokenText = (value: unknown): string | undefined =>
      typeof value === 'string'
        ? value
        : typeof (value as { content?: unknown } | undefined)?.content === 'string'
          ? (value as { content: string }).content
          : undefined;
    const padToken = tokenText(config['pad_token']) ?? tokenText(special['pad_token']) ?? EOS;
    const configured = config['model_max_length'];
    const maxLength = typeof configured === 'number' && configured > 2 && configured <= 77 ? configured : 77;
    return new ClipBpeTokenizer(new Map(Object.entries(vocabJson)), merges, { maxLength, padToken });
  }

  /** The ids of `text` without <|startoftext|>/<|endoftext|> and without cutting. */
  tokenize(text: string): number[] {
    const ids: number[] = [];
    const unknown = this.eosId;
    for (const [word] of cleanText(text).matchAll(WORDS)) {
      const characters = [...new TextEncoder().encode(word)].map((b) => BYTE_CHARACTERS[b]!).join('');
      for (const piece of this.bpe(word === BOS || word === EOS ? word : characters)) {
        ids.push(this.vocab.get(piece) ?? unknown);
      }
    }
    return ids;
  }

  /** One row of `maxLength` ids per prompt: BOS, at most maxLength − 2 tokens, EOS, padding. */
  encode(prompts: readonly string[]): number[][] {
    const { maxLength } = this.options;
    return prompts.map((prompt) => {
      const row = [this.bosId, ...this.tokenize(prompt).slice(0, maxLength - 2), this.eosId];
      while (row.length < maxLength) row.push(this.padId);
      return row;
    });
  }

  /** Merges the lowest-ranked adjacent pair until none is in merges.txt. */
  private bpe(word: string): string[] {
    const cached = this.cache.get(word);
    if (cached) return cached;
    if (word === BOS || word === EOS) return [word];
    const symbols = [...word];
    symbols[symbols.length - 1] += '</w>';
    let parts = symbols;
    for (;;) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i < parts.length - 1; i++) {
        const rank = this.ranks.get(`${parts[i]} ${parts[i + 1]}`);
        if (rank !== undefined && rank < bestRank) {
          bestRank = rank;
          best = i;
        }
      }
      if (best < 0) break;
      const [first, second] = [parts[best]!, parts[best + 1]!];
      // Every occurrence of the pair, left to right, as one pass.
      const merged: string[] = [];
      for (let i = 0; i < parts.length; i++) {
        if (i < parts.length - 1 && parts[i] === first && parts[i + 1] === second) {
          merged.push(first + second);
          i++;
        } else {
          merged.push(parts[i]!);
        }
      }
      parts = merged;
    }
    if (this.cache.size < 10_000) this.cache.set(word, parts);
    return parts;
  }
}

async function optionalJson(path: string): Promise<Record<string, unknown>> {
  return existsSync(path) ? (JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>) : {};
}
