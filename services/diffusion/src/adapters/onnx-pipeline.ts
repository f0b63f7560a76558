// A diffusers ONNX pipeline folder as a DiffusionModel, run on ONNX Runtime directly. The layout
// is the one diffusers' OnnxStableDiffusionPipeline exports (and Optimum writes):
//
//   model_index.json                 components; must name tokenizer, text_encoder, unet,
//                                    vae_decoder and scheduler
//   scheduler/scheduler_config.json  any class of scheduling/noise-schedule.ts SCHEDULER_CLASSES
//   tokenizer/                       tokenizer.json (Transformers.js), or CLIP's vocab.json +
//                                    merges.txt as diffusers ships them (tokenizer/clip-bpe.ts)
//   text_encoder/, unet/, vae_decoder/  model.onnx each (config.json optional)
//
// Input types are read from each session: token ids int32 or int64; a timestep int64, float32 or
// float16; latents and hidden states float32 or float16. An fp16 export runs as it is: the loop
// stays in float32 and tensors are converted to and from float16 at each session's edges.
// Components the text-to-image loop does not use are ignored even when model_index.json names
// them: safety_checker (no safety checking is done), feature_extractor (its input) and
// vae_encoder (image-to-image); their folders may be present or absent.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AutoTokenizer } from '@huggingface/transformers';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { transformersDeviceOptions, type ExecutionConfig, type ModelEntry } from '@switchboard/models';
import type { DiffusionModel, FloatTensor } from '../generation/diffusion-model.js';
import { parseSchedulerConfig } from '../scheduling/noise-schedule.js';
import { ClipBpeTokenizer } from '../tokenizer/clip-bpe.js';
import { fromFloat16Array, toFloat16Array } from '@switchboard/models';
import { nativeSize } from './native-size.js';

const readJson = async (path: string) => JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;

/** An input's declared element type and rank, from the session's own metadata. */
function inputInfo(session: InferenceSession, name: string): { type: string; rank: number } {
  const meta = session.inputMetadata.find((m) => m.name === name);
  if (!meta?.isTensor) throw new Error(`the model has no tensor input "${name}"`);
  return { type: meta.type, rank: meta.shape.length };
}

type FloatType = 'float32' | 'float16';

function floatType(session: InferenceSession, part: string, input: string): FloatType {
  const { type } = inputInfo(session, input);
  if (type !== 'float32' && type !== 'float16') {
    throw new Error(`${part}: input "${input}" is ${type}; only float32 and float16 exports are supported`);
  }
  return type;
}

/** A float32 array as the session's input type. */
const floatTensor = (type: FloatType, data: Float32Array, dims: readonly number[]): Tensor =>
  type === 'float16' ? new Tensor('float16', toFloat16Array(data), dims) : new Tensor('float32', data, dims);

/** Integer ids in the element type the text encoder declares. */
function idTensor(type: string, ids: readonly number[], dims: readonly number[]): Tensor {
  if (type === 'int64') return new Tensor('int64', BigInt64Array.from(ids, BigInt), dims);
  if (type === 'int32') return new Tensor('int32', Int32Array.from(ids), dims);
  throw new Error(`text_encoder: input_ids of type ${type} is not supported`);
}

function timestepTensor(type: string, rank: number, timestep: number): Tensor {
  const dims = rank === 0 ? [] : [1];
  // An integer timestep input truncates, as diffusers' ONNX pipeline does (numpy astype).
  if (type === 'int64') return new Tensor('int64', BigInt64Array.of(BigInt(Math.trunc(timestep))), dims);
  if (type === 'float32') return new Tensor('float32', Float32Array.of(timestep), dims);
  if (type === 'float16') return new Tensor('float16', toFloat16Array(Float32Array.of(timestep)), dims);
  throw new Error(`unet: timestep of type ${type} is not supported`);
}

/** An output as float32, converted from float16 when the export computes in half precision. */
function floatOutput(outputs: InferenceSession.ReturnType, name: string): FloatTensor {
  const tensor = outputs[name];
  if (tensor?.type === 'float32') return { data: tensor.data as Float32Array, dims: tensor.dims };
  if (tensor?.type === 'float16')
    return { data: fromFloat16Array(tensor.data as Uint16Array), dims: tensor.dims };
  throw new Error(`missing float32 or float16 output "${name}"`);
}

/** Prompts → rows of token ids, each as long as the text encoder expects. */
type PromptTokenizer = (prompts: readonly string[]) => { ids: number[]; dims: [number, number] };

/**
 * tokenizer/tokenizer.json when the export has one (Transformers.js reads it); otherwise CLIP's
 * vocab.json + merges.txt, as diffusers ships the CLIPTokenizer of every Stable Diffusion export.
 */
async function loadTokenizer(entry: ModelEntry): Promise<PromptTokenizer> {
  const dir = join(entry.dir, 'tokenizer');
  if (existsSync(join(dir, 'tokenizer.json'))) {
    // Ids are folder names under Transformers.js's localModelPath (set by useLocalModels).
    const tokenizer = await AutoTokenizer.from_pretrained(`${entry.id}/tokenizer`, {
      local_files_only: true,
    });
    const maxLength = Math.min(Number(tokenizer.model_max_length) || 77, 77);
    return (prompts) => {
      const { input_ids } = tokenizer([...prompts], {
        padding: 'max_length',
        truncation: true,
        max_length: maxLength,
      });
      return { ids: Array.from(input_ids.data as BigInt64Array, Number), dims: [prompts.length, maxLength] };
    };
  }
  if (existsSync(join(dir, 'vocab.json')) && existsSync(join(dir, 'merges.txt'))) {
    const clip = await ClipBpeTokenizer.fromFolder(dir);
    return (prompts) => ({
      ids: clip.encode(prompts).flat(),
      dims: [prompts.length, clip.options.maxLength],
    });
  }
  throw new Error('tokenizer/ has neither tokenizer.json nor vocab.json + merges.txt');
}

export async function loadOnnxPipeline(
  entry: ModelEntry,
  execution: ExecutionConfig,
): Promise<DiffusionModel> {
  const index = await readJson(join(entry.dir, 'model_index.json'));
  for (const part of ['tokenizer', 'text_encoder', 'unet', 'vae_decoder', 'scheduler']) {
    if (!(part in index)) throw new Error(`model_index.json names no ${part}`);
  }
  const scheduler = parseSchedulerConfig(
    await readJson(join(entry.dir, 'scheduler', 'scheduler_config.json')),
  );
  const optionalJson = async (...path: string[]) =>
    existsSync(join(entry.dir, ...path)) ? await readJson(join(entry.dir, ...path)) : {};
  const vaeConfig = await optionalJson('vae_decoder', 'config.json');
  const unetConfig = await optionalJson('unet', 'config.json');
  const scalingFactor =
    typeof vaeConfig['scaling_factor'] === 'number' ? vaeConfig['scaling_factor'] : 0.18215;
  const latentChannels = typeof vaeConfig['latent_channels'] === 'number' ? vaeConfig['latent_channels'] : 4;
  const blocks = Array.isArray(vaeConfig['block_out_channels']) ? vaeConfig['block_out_channels'].length : 4;
  const vaeScaleFactor = 2 ** (blocks - 1);
  const native = nativeSize(unetConfig, vaeConfig, vaeScaleFactor);

  const tokenize = await loadTokenizer(entry);
  const { session_options } = transformersDeviceOptions(execution);
  const open = (part: string) =>
    InferenceSession.create(join(entry.dir, part, 'model.onnx'), session_options);
  const [textEncoder, unet, vaeDecoder] = await Promise.all([
    open('text_encoder'),
    open('unet'),
    open('vae_decoder'),
  ]);

  const sampleType = floatType(unet, 'unet', 'sample');
  const contextType = floatType(unet, 'unet', 'encoder_hidden_states');
  const latentType = floatType(vaeDecoder, 'vae_decoder', 'latent_sample');
  const idsType = inputInfo(textEncoder, 'input_ids').type;
  const timestep = inputInfo(unet, 'timestep');

  return {
    id: entry.id,
    latentChannels,
    vaeScaleFactor,
    nativePixels: native.width * native.height,
    nativeWidth: native.width,
    nativeHeight: native.height,
    // The UNet holds nearly all the weights; its input type is the export's precision.
    dtype: sampleType === 'float16' ? 'fp16' : 'fp32',
    scheduler,

    async encodePrompts(prompts) {
      const { ids, dims } = tokenize(prompts);
      const outputs = await textEncoder.run({ input_ids: idTensor(idsType, ids, dims) });
      return floatOutput(outputs, textEncoder.outputNames[0]!);
    },

    async predictNoise(latents, t, hiddenStates) {
      const outputs = await unet.run({
        sample: floatTensor(sampleType, latents.data, latents.dims),
        timestep: timestepTensor(timestep.type, timestep.rank, t),
        encoder_hidden_states: floatTensor(contextType, hiddenStates.data, hiddenStates.dims),
      });
      return floatOutput(outputs, unet.outputNames[0]!).data;
    },

    async decodeLatents(latents) {
      const scaled = latents.data.map((x) => x / scalingFactor);
      const outputs = await vaeDecoder.run({ latent_sample: floatTensor(latentType, scaled, latents.dims) });
      return floatOutput(outputs, vaeDecoder.outputNames[0]!);
    },

    async dispose() {
      await Promise.all([textEncoder.release(), unet.release(), vaeDecoder.release()]);
    },
  };
}
