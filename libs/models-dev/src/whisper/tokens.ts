// Whisper's special tokens, in the order of the multilingual Whisper vocabularies (v1/v2, 99
// languages): they follow the text vocabulary, and the timestamps come last. Transformers.js
// relies on that order: `timestamp_begin` is `<|notimestamps|>` + 1, a timestamp's time is
// (id − timestamp_begin) · 0.02 s, and "text" is every id below `<|endoftext|>`.

/** The 99 language codes of multilingual Whisper, in token order (`<|en|>` first). */
export const WHISPER_LANGUAGES = [
  'en', 'zh', 'de', 'es', 'ru', 'ko', 'fr', 'ja', 'pt', 'tr', 'pl', 'ca', 'nl', 'ar', 'sv', 'it', 'id',
  'hi', 'fi', 'vi', 'he', 'uk', 'el', 'ms', 'cs', 'ro', 'da', 'hu', 'ta', 'no', 'th', 'ur', 'hr', 'bg',
  'lt', 'la', 'mi', 'ml', 'cy', 'sk', 'te', 'fa', 'lv', 'bn', 'sr', 'az', 'sl', 'kn', 'et', 'mk', 'br',
  'eu', 'is', 'hy', 'ne', 'mn', 'bs', 'kk', 'sq', 'sw', 'gl', 'mr', 'pa', 'si', 'km', 'sn', 'yo', 'so',
  'af', 'oc', 'ka', 'be', 'tg', 'sd', 'gu', 'am', 'yi', 'lo', 'uz', 'fo', 'ht', 'ps', 'tk', 'nn', 'mt',
  'sa', 'lb', 'my', 'bo', 'tl', 'mg', 'as', 'tt', 'haw', 'ln', 'ha', 'ba', 'jw', 'su',
] as const; // prettier-ignore

export type WhisperLanguage = (typeof WHISPER_LANGUAGES)[number];

/** Seconds between consecutive timestamp tokens, and how many there are (`<|0.00|>` … `<|30.00|>`). */
export const TIME_PRECISION = 0.02;
export const TIMESTAMP_COUNT = 1501;

export const languageToken = (code: string): string => `<|${code}|>`;
export const timestampToken = (index: number): string => `<|${(index * TIME_PRECISION).toFixed(2)}|>`;

/** Ids of the special tokens, given where the text vocabulary ends. */
export interface WhisperTokenIds {
  /** `<|endoftext|>`: end of a transcript, also used as BOS, PAD and UNK (as Whisper does). */
  readonly endOfText: number;
  readonly startOfTranscript: number;
  /** `<|en|>` … `<|su|>`, by language code. */
  readonly languages: Readonly<Record<WhisperLanguage, number>>;
  readonly translate: number;
  readonly transcribe: number;
  readonly startOfLm: number;
  readonly startOfPrev: number;
  readonly noCaptions: number;
  readonly noTimestamps: number;
  /** `<|0.00|>`; timestamp i (i · 0.02 s) is `timestampBegin + i`. */
  readonly timestampBegin: number;
  /** One past the last id: the vocabulary size. */
  readonly end: number;
}

/** Whisper's added tokens in id order (specials, then timestamps), the first at id `textVocabSize`. */
export function whisperSpecialTokens(textVocabSize: number): {
  ids: WhisperTokenIds;
  tokens: { content: string; id: number; special: boolean }[];
} {
  const contents = [
    '<|endoftext|>',
    '<|startoftranscript|>',
    ...WHISPER_LANGUAGES.map(languageToken),
    '<|translate|>',
    '<|transcribe|>',
    '<|startoflm|>',
    '<|startofprev|>',
    '<|nocaptions|>',
    '<|notimestamps|>',
  ];
  const tokens = contents.map((content, i) => ({ content, id: textVocabSize + i, special: true }));
  const timestampBegin = textVocabSize + contents.length;
  // Timestamps are added tokens but not special: Transformers.js takes the last special id + 1 as
  // the first timestamp, and its ASR decoding treats special ids as "ignore", not as times.
  for (let i = 0; i < TIMESTAMP_COUNT; i++) {
    tokens.push({ content: timestampToken(i), id: timestampBegin + i, special: false });
  }
  const at = (offset: number): number => textVocabSize + offset;
  const languageBase = at(2);
  const afterLanguages = languageBase + WHISPER_LANGUAGES.length;
  const ids: WhisperTokenIds = {
    endOfText: at(0),
    startOfTranscript: at(1),
    languages: Object.fromEntries(WHISPER_LANGUAGES.map((code, i) => [code, languageBase + i])) as Record<
      WhisperLanguage,
      number
    >,
    translate: afterLanguages,
    transcribe: afterLanguages + 1,
    startOfLm: afterLanguages + 2,
    startOfPrev: afterLanguages + 3,
    noCaptions: afterLanguages + 4,
    noTimestamps: afterLanguages + 5,
    timestampBegin,
    end: timestampBegin + TIMESTAMP_COUNT,
  };
  return { ids, tokens };
}
