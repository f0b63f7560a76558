// A Transformers.js causal language model (a text-generation ONNX export it can load with a
// standard KV cache, e.g. Llama, Qwen, Phi) as a LanguageModel. Passes go through the model's own
// forward, which knows the export's inputs (position ids, cache branch); the caches, padded into
// one batch for the decoding loop, are kv-cache.ts's; sampling and scheduling stay ours.
import type { Tensor } from '@huggingface/transformers';
import {
  AutoModelForCausalLM,
  AutoTokenizer,
  type PreTrainedModel,
  type PreTrainedTokenizer,
} from '@huggingface/transformers';
import { transformersDeviceOptions, type ExecutionConfig, type ModelEntry } from '@switchboard/models';
import { ChatTemplate } from '../chat/chat-template.js';
import type { LlmDtype } from '../config.js';
import type { LanguageModel } from '../generation/model.js';
import { KvBatch, PromptPrefill, type Forward } from './kv-cache.js';

/** The parts of the model object used here (typed loosely by the library). */
interface StepModel {
  config: { model_type?: string; max_position_embeddings?: number; eos_token_id?: number | number[] };
  generation_config: { eos_token_id?: number | number[] | null } | null;
  forward(inputs: Parameters<Forward>[0]): Promise<Record<string, Tensor>>;
  dispose(): Promise<unknown>;
}

/** Model types whose position ids Transformers.js counts from 1 (it derives them so for these). */
const ONE_BASED_POSITIONS = new Set(['paligemma', 'gemma3_text', 'gemma3']);

function idSet(...values: (number | number[] | null | undefined)[]): Set<number> {
  return new Set(values.flatMap((v) => (v === null || v === undefined ? [] : Array.isArray(v) ? v : [v])));
}

/**
 * Loads a model folder; `dtype` picks its weights file the way Transformers.js names them
 * (fp32 → onnx/model.onnx, q8 → onnx/model_quantized.onnx, …) and a missing file fails the load.
 */
export async function loadCausalLm(
  entry: ModelEntry,
  execution: ExecutionConfig,
  dtype: LlmDtype = 'fp32',
): Promise<LanguageModel> {
  // Ids are folder names under Transformers.js's localModelPath (set by useLocalModels).
  const tokenizer: PreTrainedTokenizer = await AutoTokenizer.from_pretrained(entry.id, {
    local_files_only: true,
  });
  const loaded: PreTrainedModel = await AutoModelForCausalLM.from_pretrained(entry.id, {
    local_files_only: true,
    dtype,
    ...transformersDeviceOptions(execution),
  });
  const model = loaded as unknown as StepModel;
  // The model's own forward: it derives position ids from the attention mask (left padding
  // included) and feeds zero-length caches to a first pass, as its generate() would.
  const forward: Forward = (inputs) => model.forward(inputs);
  const tokenizerMax = Number(tokenizer.model_max_length);
  const contextLength =
    model.config.max_position_embeddings ?? (Number.isFinite(tokenizerMax) ? tokenizerMax : 2048);
  const firstPosition = ONE_BASED_POSITIONS.has(model.config.model_type ?? '') ? 1 : 0;
  const eosTokenIds = idSet(model.generation_config?.eos_token_id, model.config.eos_token_id);
  if (eosTokenIds.size === 0) throw new Error('the model declares no eos_token_id');
  return {
    id: entry.id,
    contextLength,
    dtype,
    eosTokenIds,
    // Read from the tokenizer_config.json the tokenizer was loaded from.
    chatTemplate: ChatTemplate.fromTokenizerConfig(tokenizer.config as Record<string, unknown>),
    encode: (text, options = {}) =>
      tokenizer.encode(text, { add_special_tokens: options.addSpecialTokens ?? true }),
    decode: (ids) =>
      // The tokenizer refuses an empty list; the empty list is the empty text.
      ids.length === 0
        ? ''
        : tokenizer.decode([...ids], { skip_special_tokens: true, clean_up_tokenization_spaces: false }),
    prefill: () => new PromptPrefill(forward),
    openBatch: () => new KvBatch(forward, firstPosition),
    dispose: async () => {
      await model.dispose();
    },
  };
}
