// A diffusers ONNX pipeline folder (model_index.json, tokenizer/, text_encoder/model.onnx,
// unet/model.onnx, vae_decoder/model.onnx, scheduler/scheduler_config.json) as a DiffusionModel,
// run on ONNX Runtime directly. Input types are read from each session, so exports that take
// int32 or int64 token ids, or a float or int64 timestep, all load.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AutoTokenizer, type PreTrainedTokenizer } from '@huggingface/transformers';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { transformersDeviceOptions, type ExecutionConfig, type ModelEntry } from '@switchboard/models';
import type { DiffusionModel, FloatTensor } from '../generation/diffusion-model.js';
import { parseSchedulerConfig } from '../scheduling/noise-schedule.js';
import { nativePixels } from './native-size.js';

const readJson = async (path: string) => JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;

/** An input's declared element type and rank, from the session's own metadata. */
function inputInfo(session: InferenceSession, name: string): { type: string; rank: number } {
  const meta = session.inputMetadata.find((m) => m.name === name);
  if (!meta?.isTensor) throw new Error(`the model has no tensor input "${name}"`);
  return { type: meta.type, rank: meta.shape.length };
}

function requireFloat32(session: InferenceSession, part: string, ...inputs: string[]): void {
  for (const input of inputs) {
    const { type } = inputInfo(session, input);
    if (type !== 'float32') {
      throw new Error(`${part}: input "${input}" is ${type}; only float32 exports are supported`);
    }
  }
}

/** Integer ids in the element type the text encoder declares. */
function idTensor(type: string, ids: readonly bigint[], dims: readonly number[]): Tensor {
  if (type === 'int64') return new Tensor('int64', BigInt64Array.from(ids), dims);
  if (type === 'int32') return new Tensor('int32', Int32Array.from(ids, Number), dims);
  throw new Error(`text_encoder: input_ids of type ${type} is not supported`);
}

function timestepTensor(type: string, rank: number, timestep: number): Tensor {
  const dims = rank === 0 ? [] : [1];
  // An integer timestep input truncates, as diffusers' ONNX pipeline does (numpy astype).
  if (type === 'int64') return new Tensor('int64', BigInt64Array.of(BigInt(Math.trunc(timestep))), dims);
  if (type === 'float32') return new Tensor('float32', Float32Array.of(timestep), dims);
  throw new Error(`unet: timestep of type ${type} is not supported`);
}

function floatOutput(outputs: InferenceSession.ReturnType, name: string): FloatTensor {
  const tensor = outputs[name];
  if (!tensor || tensor.type !== 'float32') throw new Error(`missing float32 output "${name}"`);
  return { data: tensor.data as Float32Array, dims: tensor.dims };
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

  const { session_options } = transformersDeviceOptions(execution);
  const open = (part: string) =>
    InferenceSession.create(join(entry.dir, part, 'model.onnx'), session_options);
  const [textEncoder, unet, vaeDecoder] = await Promise.all([
    open('text_encoder'),
    open('unet'),
    open('vae_decoder'),
  ]);
  // Ids are folder names under Transformers.js's localModelPath (set by useLocalModels).
  const tokenizer: PreTrainedTokenizer = await AutoTokenizer.from_pretrained(`${entry.id}/tokenizer`, {
    local_files_only: true,
  });

  requireFloat32(unet, 'unet', 'sample', 'encoder_hidden_states');
  requireFloat32(vaeDecoder, 'vae_decoder', 'latent_sample');
  const idsType = inputInfo(textEncoder, 'input_ids').type;
  const timestep = inputInfo(unet, 'timestep');
  const maxLength = Math.min(Number(tokenizer.model_max_length) || 77, 77);

  return {
    id: entry.id,
    latentChannels,
    vaeScaleFactor,
    nativePixels: nativePixels(unetConfig, vaeConfig, vaeScaleFactor),
    scheduler,

    async encodePrompts(prompts) {
      const { input_ids } = tokenizer([...prompts], {
        padding: 'max_length',
        truncation: true,
        max_length: maxLength,
      });
      const ids = idTensor(idsType, Array.from(input_ids.data as BigInt64Array), input_ids.dims);
      const outputs = await textEncoder.run({ input_ids: ids });
      return floatOutput(outputs, textEncoder.outputNames[0]!);
    },

    async predictNoise(latents, t, hiddenStates) {
      const outputs = await unet.run({
        sample: new Tensor('float32', latents.data, latents.dims),
        timestep: timestepTensor(timestep.type, timestep.rank, t),
        encoder_hidden_states: new Tensor('float32', hiddenStates.data, hiddenStates.dims),
      });
      return floatOutput(outputs, unet.outputNames[0]!).data;
    },

    async decodeLatents(latents) {
      const scaled = latents.data.map((x) => x / scalingFactor);
      const outputs = await vaeDecoder.run({ latent_sample: new Tensor('float32', scaled, latents.dims) });
      return floatOutput(outputs, vaeDecoder.outputNames[0]!);
    },

    async dispose() {
      await Promise.all([textEncoder.release(), unet.release(), vaeDecoder.release()]);
    },
  };
}
