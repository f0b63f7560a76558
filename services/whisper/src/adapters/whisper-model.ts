// A Whisper model from the repository (Transformers.js layout: encoder_model.onnx +
// decoder_model_merged.onnx) as a SpeechModel. Windowing is ours rather than the ASR pipeline's so
// that each window gets a timestamp processor, a cancellation check per row and a bounded number of
// tokens, so that windows can come as the audio is decoded, and so that windows of several uploads
// are encoded and decoded as one batch (whisper-batch-rows.ts keeps the rows independent); the
// tokenizer's own ASR decoding stitches the windows' overlaps together. What the model can do comes from the export's own files
// (whisper-vocabulary.ts): its languages and prompt from generation_config.json and the tokenizer,
// English-only models included; its mel bins and filters from preprocessor_config.json; its
// suppress lists and timestamp ids from generation_config.json (applied by Transformers.js).
import {
  AutoProcessor,
  AutoTokenizer,
  LogitsProcessorList,
  SuppressTokensAtBeginLogitsProcessor,
  Tensor,
  WhisperForConditionalGeneration,
  WhisperTimeStampLogitsProcessor,
  type PreTrainedTokenizer,
  type Processor,
} from '@huggingface/transformers';
import { transformersDeviceOptions, type ExecutionConfig, type ModelEntry } from '@switchboard/models';
import { SAMPLE_RATE } from '../audio/pcm.js';
import type { SpeechModel, WindowRequest } from '../recognition/speech-model.js';
import { EndRows, rowTokens, stackFeatures } from './whisper-batch-rows.js';
import {
  melBins,
  mostLikelyLanguage,
  whisperVocabulary,
  type WhisperGenerationFields,
} from './whisper-vocabulary.js';

/** What this adapter reads of Transformers.js's Whisper generation config. */
interface WhisperGenerationConfig extends WhisperGenerationFields {
  eos_token_id: number | number[];
  max_length?: number;
  begin_suppress_tokens?: number[] | null;
}

interface DecodedAsr {
  chunks?: { text: string; timestamp: [number | null, number | null] }[];
}

/** The parts of the tokenizer and model used here that Transformers.js's types leave out. */
type AsrTokenizer = PreTrainedTokenizer & {
  _decode_asr(
    chunks: { tokens: number[]; stride: [number, number, number] }[],
    options: { time_precision: number; return_timestamps: boolean; force_full_sequences: boolean },
  ): [string, DecodedAsr];
};
type WhisperModel = WhisperForConditionalGeneration & {
  generation_config: WhisperGenerationConfig;
  config: { max_source_positions: number; max_target_positions?: number; num_mel_bins?: number };
};

/** The weights loaded: the fp32 files of the Transformers.js layout (onnx/encoder_model.onnx, …). */
const DTYPE = 'fp32';

export async function loadWhisperModel(entry: ModelEntry, execution: ExecutionConfig): Promise<SpeechModel> {
  // Ids are folder names under Transformers.js's localModelPath (set by useLocalModels).
  const processor: Processor = await AutoProcessor.from_pretrained(entry.id, { local_files_only: true });
  const tokenizer = (await AutoTokenizer.from_pretrained(entry.id, {
    local_files_only: true,
  })) as AsrTokenizer;
  const model = (await WhisperForConditionalGeneration.from_pretrained(entry.id, {
    local_files_only: true,
    dtype: DTYPE,
    ...transformersDeviceOptions(execution),
  })) as WhisperModel;

  const generation = model.generation_config;
  const vocabulary = whisperVocabulary(
    generation,
    (token) => tokenizer.convert_tokens_to_ids(token) ?? undefined,
    tokenizer.all_special_tokens,
  );
  const eosTokenIds = new Set([generation.eos_token_id].flat());
  const featureConfig = (
    processor as unknown as { feature_extractor: { config: { chunk_length: number; feature_size: unknown } } }
  ).feature_extractor.config;
  // The encoder's input width comes from the export's own configs (80 bins, 128 for large-v3).
  melBins(featureConfig.feature_size, model.config.num_mel_bins);
  const timePrecision = featureConfig.chunk_length / model.config.max_source_positions;
  const maxLength = generation.max_length ?? model.config.max_target_positions ?? 448;

  const features = async (audio: Float32Array): Promise<Tensor> =>
    ((await processor(audio)) as { input_features: Tensor }).input_features;

  return {
    id: entry.id,
    dtype: DTYPE,
    multilingual: vocabulary.multilingual,
    languages: new Set(vocabulary.languages.keys()),

    async detectLanguage(samples) {
      // An English-only model has nothing to choose from.
      if (!vocabulary.multilingual) return mostLikelyLanguage([], vocabulary.languages);
      const inputFeatures = await features(samples);
      const start = new Tensor('int64', BigInt64Array.of(BigInt(generation.decoder_start_token_id)), [1, 1]);
      const output = (await model({ input_features: inputFeatures, decoder_input_ids: start })) as {
        logits: Tensor;
      };
      return mostLikelyLanguage(output.logits.data as Float32Array, vocabulary.languages);
    },

    batchKey(language) {
      return `${entry.id}:prompt=${vocabulary.prompt(language).length}`;
    },

    async recognizeWindows(requests: readonly WindowRequest[]): Promise<(number[] | Error)[]> {
      const aborted = (request: WindowRequest) => request.signal.reason as Error;
      const live = requests.filter((request) => !request.signal.aborted);
      if (live.length === 0) return requests.map(aborted);
      // The prompts from the export's own tokens (lang_to_id, task_to_id): Transformers.js would
      // build them from its built-in language list, and refuses any for an English-only model.
      const prompts = live.map((request) => vocabulary.prompt(request.language));
      const promptLength = prompts[0]!.length;
      if (prompts.some((prompt) => prompt.length !== promptLength)) {
        throw new Error('windows of one batch need prompts of one length (see batchKey)');
      }
      const signals = live.map((request) => request.signal);
      // Transformers.js's Whisper generate sizes its timestamp and begin-suppress processors by its
      // `decoder_input_ids`, which for a batch is the number of rows, not the prompt's length: so
      // those two are turned off there and added here, per prompt length, in the order a lone call
      // applies them. Every processor treats row i from row i's tokens alone.
      const processors = new LogitsProcessorList();
      if (generation.begin_suppress_tokens) {
        processors.push(
          new SuppressTokensAtBeginLogitsProcessor(generation.begin_suppress_tokens, promptLength),
        );
      }
      processors.push(
        new WhisperTimeStampLogitsProcessor(
          generation as unknown as ConstructorParameters<typeof WhisperTimeStampLogitsProcessor>[0],
          prompts[0]!,
        ),
      );
      processors.push(new EndRows(signals, promptLength, eosTokenIds));
      const inputFeatures = stackFeatures(
        await Promise.all(live.map((request) => features(request.samples))),
      );
      const sequences = (await model.generate({
        inputs: inputFeatures,
        decoder_input_ids: prompts,
        return_timestamps: false,
        begin_suppress_tokens: null,
        // Also keeps Transformers.js on its plain generate path (its seek loop can stall on a
        // window whose last timestamp is 0.00).
        max_new_tokens: maxLength - promptLength,
        logits_processor: processors,
      } as unknown as Parameters<WhisperModel['generate']>[0])) as Tensor;
      const rows = sequences.tolist() as bigint[][];
      const tokens = new Map(
        live.map((request, i) => [request, rowTokens(rows[i]!, promptLength, eosTokenIds)]),
      );
      return requests.map((request) =>
        request.signal.aborted ? aborted(request) : (tokens.get(request) ?? aborted(request)),
      );
    },

    stitch(windows) {
      const [text, { chunks = [] }] = tokenizer._decode_asr(
        windows.map(({ window, tokens }) => ({
          tokens: [...tokens],
          stride: [
            (window.end - window.start) / SAMPLE_RATE,
            window.strideLeft / SAMPLE_RATE,
            window.strideRight / SAMPLE_RATE,
          ],
        })),
        { time_precision: timePrecision, return_timestamps: true, force_full_sequences: false },
      );
      return { text, chunks };
    },

    async dispose() {
      await model.dispose();
    },
  };
}
