// What a Whisper export's own files say about its languages and prompt, read the way Hugging Face
// reads them: generation_config.json's `is_multilingual`, `lang_to_id` and `task_to_id` (else the
// tokenizer's `<|xx|>` tokens between `<|startoftranscript|>` and `<|translate|>`), and
// preprocessor_config.json's `feature_size` against config.json's `num_mel_bins`. Nothing here
// assumes a checkpoint: English-only models (`*.en`) have no language token and a one-token
// prompt, large-v3 has 100 languages and 128 mel bins, a fine-tune may keep fewer languages.

/** The fields of generation_config.json read here (Transformers.js merges config.json's in). */
export interface WhisperGenerationFields {
  decoder_start_token_id: number;
  is_multilingual?: boolean | null;
  lang_to_id?: Record<string, number> | null;
  task_to_id?: Record<string, number> | null;
}

export interface WhisperVocabulary {
  /** Whether the prompt names a language and a task (false for English-only models). */
  readonly multilingual: boolean;
  /** Language code → its token id; an English-only model has `en` with no token. */
  readonly languages: ReadonlyMap<string, number | undefined>;
  /** The decoder prompt for `language` (one of `languages`), timestamps on. */
  prompt(language: string): number[];
}

const LANGUAGE_TOKEN = /^<\|([a-z]{2,3})\|>$/;

/**
 * Reads the vocabulary; `tokenId` looks a token up in the tokenizer (undefined when absent).
 * Throws on a multilingual model without a language or without a transcribe task.
 */
export function whisperVocabulary(
  generation: WhisperGenerationFields,
  tokenId: (token: string) => number | undefined,
  addedTokens: readonly string[] = [],
): WhisperVocabulary {
  const fromConfig = Object.entries(generation.lang_to_id ?? {}).flatMap(([token, id]) => {
    const code = LANGUAGE_TOKEN.exec(token)?.[1];
    return code === undefined ? [] : [[code, id] as const];
  });
  const multilingual = generation.is_multilingual ?? fromConfig.length > 0;
  const sot = generation.decoder_start_token_id;
  if (!multilingual) {
    // Whisper's *.en models transcribe English only; their prompt is <|startoftranscript|>.
    return { multilingual, languages: new Map([['en', undefined]]), prompt: () => [sot] };
  }
  let languages = new Map<string, number>(fromConfig);
  if (languages.size === 0) {
    // No lang_to_id: the language tokens are the tokenizer's, between <|startoftranscript|> and <|translate|>.
    const translate = tokenId('<|translate|>') ?? Infinity;
    languages = new Map(
      addedTokens.flatMap((token) => {
        const code = LANGUAGE_TOKEN.exec(token)?.[1];
        const id = tokenId(token);
        return code !== undefined && id !== undefined && id > sot && id < translate ? [[code, id]] : [];
      }),
    );
  }
  if (languages.size === 0) throw new Error('a multilingual Whisper without language tokens (no lang_to_id)');
  const transcribe = generation.task_to_id?.['transcribe'] ?? tokenId('<|transcribe|>');
  if (transcribe === undefined) throw new Error('no <|transcribe|> task token');
  return {
    multilingual,
    languages,
    prompt(language) {
      const id = languages.get(language);
      if (id === undefined) throw new Error(`"${language}" is not a language of this model`);
      return [sot, id, transcribe];
    },
  };
}

/**
 * Whisper's language detection: after `<|startoftranscript|>`, the most probable of the model's
 * own language tokens (and only those). `logits` are the vocabulary's logits at that step.
 */
export function mostLikelyLanguage(
  logits: ArrayLike<number>,
  languages: ReadonlyMap<string, number | undefined>,
): string {
  let best: string | undefined;
  let bestLogit = -Infinity;
  for (const [code, id] of languages) {
    const logit = id === undefined ? -Infinity : (logits[id] ?? -Infinity);
    if (best === undefined || logit > bestLogit) [best, bestLogit] = [code, logit];
  }
  if (best === undefined) throw new Error('the model has no language');
  return best;
}

/** preprocessor_config.json's mel bins, which must be the encoder's (config.json num_mel_bins). */
export function melBins(featureSize: unknown, numMelBins: unknown): number {
  if (typeof featureSize !== 'number' || !Number.isInteger(featureSize) || featureSize <= 0) {
    throw new Error(
      `preprocessor_config.json: feature_size must be a positive integer, got ${String(featureSize)}`,
    );
  }
  if (numMelBins !== undefined && numMelBins !== featureSize) {
    throw new Error(
      `preprocessor_config.json's feature_size (${featureSize}) differs from config.json's num_mel_bins (${JSON.stringify(numMelBins)})`,
    );
  }
  return featureSize;
}
