// A Transformers.js causal language model (any text-generation ONNX export it can load, e.g.
// Llama, Qwen, Phi) as a LanguageModel. Each step goes through the model's own
// prepare_inputs_for_generation / forward / _update_model_kwargs_for_generation — the same
// calls its generate() makes — so position ids, attention masks and the KV cache are handled
// the way the library handles them for that architecture, while the loop (sampling,
// cancellation, streaming) stays ours.
import {
  AutoModelForCausalLM,
  AutoTokenizer,
  Tensor,
  type PreTrainedModel,
  type PreTrainedTokenizer,
} from '@huggingface/transformers';
import { transformersDeviceOptions, type ExecutionConfig, type ModelEntry } from '@switchboard/models';
import { ChatTemplate } from '../chat/chat-template.js';
import type { LlmDtype } from '../config.js';
import type { DecodeSequence, LanguageModel } from '../generation/model.js';

/** The parts of the model object the step loop calls (typed loosely by the library). */
interface StepModel {
  config: { max_position_embeddings?: number; eos_token_id?: number | number[] };
  generation_config: { eos_token_id?: number | number[] | null } | null;
  prepare_inputs_for_generation(ids: bigint[][], inputs: ModelInputs, config: unknown): ModelInputs;
  forward(inputs: ModelInputs): Promise<{ logits: Tensor }>;
  _update_model_kwargs_for_generation(args: {
    generated_input_ids: bigint[][];
    outputs: unknown;
    model_inputs: ModelInputs;
    is_encoder_decoder: boolean;
  }): ModelInputs;
  dispose(): Promise<unknown>;
}

type ModelInputs = Record<string, unknown> & { past_key_values?: { dispose?: () => unknown } | null };

const ids64 = (ids: readonly number[]) => BigInt64Array.from(ids, (id) => BigInt(id));

class CausalLmSequence implements DecodeSequence {
  private inputs: ModelInputs;
  private readonly all: bigint[][];
  private outputs: { logits: Tensor } | undefined;

  constructor(
    private readonly model: StepModel,
    promptIds: readonly number[],
  ) {
    const n = promptIds.length;
    this.inputs = {
      input_ids: new Tensor('int64', ids64(promptIds), [1, n]),
      attention_mask: new Tensor('int64', new BigInt64Array(n).fill(1n), [1, n]),
    };
    this.all = [promptIds.map((id) => BigInt(id))];
  }

  async logits(): Promise<Float32Array> {
    this.inputs = this.model.prepare_inputs_for_generation(
      this.all,
      this.inputs,
      this.model.generation_config,
    );
    this.outputs = await this.model.forward(this.inputs);
    let { logits } = this.outputs;
    // fp16 exports return fp16 logits; the sampler works in fp32 like Transformers.js's own.
    if (logits.type !== 'float32') logits = logits.to('float32');
    const data = logits.data as Float32Array;
    const vocab = logits.dims.at(-1)!;
    return data.subarray(data.length - vocab);
  }

  append(id: number): void {
    const token = BigInt(id);
    this.all[0]!.push(token);
    this.inputs = this.model._update_model_kwargs_for_generation({
      generated_input_ids: [[token]],
      outputs: this.outputs,
      model_inputs: this.inputs,
      is_encoder_decoder: false,
    });
  }

  async dispose(): Promise<void> {
    // Frees device-side cache tensors (a no-op for CPU tensors, which the GC owns).
    await this.inputs.past_key_values?.dispose?.();
  }
}

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
  const tokenizerMax = Number(tokenizer.model_max_length);
  const contextLength =
    model.config.max_position_embeddings ?? (Number.isFinite(tokenizerMax) ? tokenizerMax : 2048);
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
    start: (promptIds) => new CausalLmSequence(model, promptIds),
    dispose: async () => {
      await model.dispose();
    },
  };
}
