// The shape of the tiny Whisper and the three JSON files that describe it to Transformers.js:
// config.json (architecture; WhisperConfig field names), generation_config.json (what Whisper's
// generate reads: prompt tokens, languages, tasks, timestamps, suppression) and
// preprocessor_config.json (the log-mel front end: 80 bins, 25 ms window, 10 ms hop, 30 s chunks).
import { DEV_MODEL_MARKER } from '../marker.js';
import { WHISPER_LANGUAGES, languageToken, type WhisperTokenIds } from './tokens.js';

export interface WhisperShape {
  readonly vocabSize: number;
  readonly dModel: number;
  readonly encoderLayers: number;
  readonly encoderHeads: number;
  readonly encoderFfnDim: number;
  readonly decoderLayers: number;
  readonly decoderHeads: number;
  readonly decoderFfnDim: number;
  /** Log-mel bins of the input features. */
  readonly melBins: number;
  /** Encoder positions after the stride-2 convolution: 3000 frames → 1500. */
  readonly maxSourcePositions: number;
  /** Decoder positions: the longest token sequence (prompt included) one window may have. */
  readonly maxTargetPositions: number;
  readonly layerNormEps: number;
}

/** The Whisper front end, fixed by the architecture (every Whisper checkpoint before v3 uses it). */
export const AUDIO = {
  samplingRate: 16000,
  nFft: 400,
  hopLength: 160,
  chunkLengthS: 30,
  /** 30 s · 16 kHz. */
  samples: 480000,
  /** 30 s / 10 ms. */
  frames: 3000,
} as const;

export function checkShape(s: WhisperShape): void {
  const notPositive = Object.entries(s).filter(([, v]) => !(typeof v === 'number' && v > 0));
  if (notPositive.length > 0) throw new Error(`not positive: ${notPositive.map(([k]) => k).join(', ')}`);
  if (s.dModel % s.encoderHeads !== 0 || s.dModel % s.decoderHeads !== 0) {
    throw new Error('dModel must be a multiple of the encoder and decoder head counts');
  }
  if (s.dModel % 2 !== 0) throw new Error('dModel must be even (sinusoidal positions)');
  if (s.maxSourcePositions * 2 !== AUDIO.frames) {
    throw new Error(`maxSourcePositions must be ${AUDIO.frames / 2} (30 s of 10 ms frames, stride 2)`);
  }
}

export function whisperConfigJson(s: WhisperShape, ids: WhisperTokenIds, seed: number): object {
  return {
    architectures: ['WhisperForConditionalGeneration'],
    model_type: 'whisper',
    is_encoder_decoder: true,
    d_model: s.dModel,
    encoder_layers: s.encoderLayers,
    encoder_attention_heads: s.encoderHeads,
    encoder_ffn_dim: s.encoderFfnDim,
    decoder_layers: s.decoderLayers,
    decoder_attention_heads: s.decoderHeads,
    decoder_ffn_dim: s.decoderFfnDim,
    num_hidden_layers: s.encoderLayers,
    num_mel_bins: s.melBins,
    max_source_positions: s.maxSourcePositions,
    max_target_positions: s.maxTargetPositions,
    vocab_size: s.vocabSize,
    activation_function: 'gelu',
    scale_embedding: false,
    tie_word_embeddings: true,
    use_cache: true,
    bos_token_id: ids.endOfText,
    eos_token_id: ids.endOfText,
    pad_token_id: ids.endOfText,
    decoder_start_token_id: ids.startOfTranscript,
    median_filter_width: 7,
    torch_dtype: 'float32',
    [DEV_MODEL_MARKER]: {
      description:
        'Tiny random-weight development model built by @switchboard/models-dev; its transcripts are noise.',
      seed,
    },
  };
}

export interface GenerationIds {
  readonly ids: WhisperTokenIds;
  readonly spaceTokenId: number;
  readonly maxLength: number;
}

export function generationConfigJson({ ids, spaceTokenId, maxLength }: GenerationIds): object {
  return {
    decoder_start_token_id: ids.startOfTranscript,
    bos_token_id: ids.endOfText,
    eos_token_id: ids.endOfText,
    pad_token_id: ids.endOfText,
    max_length: maxLength,
    // Transformers.js builds the prompt (<|startoftranscript|> <|lang|> <|task|> [<|notimestamps|>])
    // from `language`, `task` and `return_timestamps`; it never reads forced_decoder_ids.
    forced_decoder_ids: null,
    is_multilingual: true,
    lang_to_id: Object.fromEntries(
      WHISPER_LANGUAGES.map((code) => [languageToken(code), ids.languages[code]]),
    ),
    task_to_id: { transcribe: ids.transcribe, translate: ids.translate },
    no_timestamps_token_id: ids.noTimestamps,
    prev_sot_token_id: ids.startOfPrev,
    max_initial_timestamp_index: 50,
    return_timestamps: false,
    // A transcript never starts with a bare space or ends before it starts.
    begin_suppress_tokens: [spaceTokenId, ids.endOfText],
    // Prompt-only tokens are never generated (as in Whisper's own generation config).
    suppress_tokens: [
      ids.startOfTranscript,
      ids.translate,
      ids.transcribe,
      ids.startOfLm,
      ids.startOfPrev,
      ids.noCaptions,
    ],
    do_sample: false,
  };
}

export function preprocessorConfigJson(s: WhisperShape): object {
  // No mel_filters: WhisperFeatureExtractor computes the Slaney mel filter bank when they are absent.
  return {
    feature_extractor_type: 'WhisperFeatureExtractor',
    processor_class: 'WhisperProcessor',
    feature_size: s.melBins,
    sampling_rate: AUDIO.samplingRate,
    hop_length: AUDIO.hopLength,
    chunk_length: AUDIO.chunkLengthS,
    n_fft: AUDIO.nFft,
    n_samples: AUDIO.samples,
    nb_max_frames: AUDIO.frames,
    padding_side: 'right',
    padding_value: 0.0,
    return_attention_mask: false,
  };
}
