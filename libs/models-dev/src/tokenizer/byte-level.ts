// Byte-level BPE building blocks, as in GPT-2 style tokenizers: every byte is shown as one
// printable character so that tokens are strings without spaces or control characters, and a
// vocabulary containing the 256 byte characters can encode any UTF-8 text.

/**
 * The byte → character table of byte-level BPE: printable Latin-1 bytes stand for themselves;
 * the other 68 bytes (controls, space, …) take the characters from U+0100 upwards, in order.
 */
export function byteToChar(): readonly string[] {
  const printable = (b: number): boolean =>
    (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const table: string[] = [];
  let next = 0x100;
  for (let b = 0; b < 256; b++) table.push(String.fromCodePoint(printable(b) ? b : next++));
  return table;
}

/** The pre-tokenizer split used by the ByteLevel pre-tokenizer with `use_regex: true`. */
const SPLIT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/** Splits text into pre-tokens and maps each to its byte characters. */
export function preTokenize(text: string, table: readonly string[]): string[][] {
  const encoder = new TextEncoder();
  return (text.match(SPLIT) ?? []).map((piece) => Array.from(encoder.encode(piece), (b) => table[b] ?? ''));
}

/**
 * Learns up to `count` merges from `corpus` (classic BPE training: repeatedly merge the most
 * frequent adjacent pair; ties go to the lexicographically smallest pair, so the result is
 * deterministic). Stops early when no pair occurs twice.
 */
export function learnMerges(corpus: string, count: number): [string, string][] {
  const table = byteToChar();
  const words = new Map<string, { symbols: string[]; freq: number }>();
  for (const symbols of preTokenize(corpus, table)) {
    const key = symbols.join('');
    const entry = words.get(key);
    if (entry) entry.freq += 1;
    else words.set(key, { symbols, freq: 1 });
  }
  const merges: [string, string][] = [];
  while (merges.length < count) {
    const pairs = new Map<string, number>();
    for (const { symbols, freq } of words.values()) {
      for (let i = 0; i + 1 < symbols.length; i++) {
        const key = `${symbols[i]} ${symbols[i + 1]}`;
        pairs.set(key, (pairs.get(key) ?? 0) + freq);
      }
    }
    let best: string | undefined;
    let bestCount = 1;
    for (const [key, n] of pairs) {
      if (n > bestCount || (n === bestCount && best !== undefined && key < best)) {
        best = key;
        bestCount = n;
      }
    }
    if (best === undefined) break;
    const [left = '', right = ''] = best.split(' ');
    merges.push([left, right]);
    for (const word of words.values()) word.symbols = applyMerge(word.symbols, left, right);
  }
  return merges;
}

function applyMerge(symbols: string[], left: string, right: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < symbols.length; i++) {
    if (symbols[i] === left && symbols[i + 1] === right) {
      out.push(left + right);
      i++;
    } else {
      out.push(symbols[i] ?? '');
    }
  }
  return out;
}
