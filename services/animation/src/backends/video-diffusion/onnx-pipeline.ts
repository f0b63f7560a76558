// An SVD-style model folder as a VideoModel on ONNX Runtime: image_encoder, vae_encoder, unet and
// vae_decoder sessions with the worker's execution providers. Every part's input and output names,
// float types and ranks come from its session, so exports that differ in those details (float16,
// a rank-0 timestep, `latent` vs `latent_sample`, a decoder that wants its frame count) all load.
import { join } from 'node:path';
import { InferenceSession } from 'onnxruntime-node';
import { transformersDeviceOptions, type ExecutionConfig, type ModelEntry } from '@switchboard/models';
import { readPipelineConfigs, type OnnxPart } from './model-configs.js';
import {
  fixedDim,
  floatOutput,
  floatTensor,
  floatType,
  integerScalar,
  pickInput,
  pickOutput,
  requireInput,
} from './onnx-io.js';
import type { UnetInput, VideoModel } from './video-model.js';

/** diffusers' StableVideoDiffusionPipeline call defaults, for a UNet config without sample_size. */
const SVD_DEFAULT_SIZE = { width: 1024, height: 576 };

export async function loadOnnxVideoPipeline(
  entry: ModelEntry,
  execution: ExecutionConfig,
): Promise<VideoModel> {
  const configs = await readPipelineConfigs(entry.dir);
  const { session_options } = transformersDeviceOptions(execution);
  const open = (part: OnnxPart) =>
    InferenceSession.create(join(entry.dir, part, 'model.onnx'), session_options);
  const [imageEncoder, vaeEncoder, unet, vaeDecoder] = await Promise.all([
    open('image_encoder'),
    open('vae_encoder'),
    open('unet'),
    open('vae_decoder'),
  ]);
  try {
    return bind(entry, configs, { imageEncoder, vaeEncoder, unet, vaeDecoder });
  } catch (error) {
    await Promise.all([imageEncoder, vaeEncoder, unet, vaeDecoder].map((s) => s.release()));
    throw error;
  }
}

interface Sessions {
  readonly imageEncoder: InferenceSession;
  readonly vaeEncoder: InferenceSession;
  readonly unet: InferenceSession;
  readonly vaeDecoder: InferenceSession;
}

function bind(
  entry: ModelEntry,
  configs: Awaited<ReturnType<typeof readPipelineConfigs>>,
  { imageEncoder, vaeEncoder, unet, vaeDecoder }: Sessions,
): VideoModel {
  const lc = configs.latentChannels;
  // The CLIP vision encoder: pixel_values → image_embeds.
  const pixelValues = pickInput(imageEncoder, 'image_encoder', ['pixel_values']);
  const pixelType = floatType(pixelValues, 'image_encoder');
  const embedsOut = pickOutput(imageEncoder, 'image_encoder', ['image_embeds']);
  const clipSize = fixedDim(pixelValues, 3) ?? configs.clip.size;
  // The VAE encoder: sample → latent_sample (the mode), or the distribution's parameters.
  const encoderIn = pickInput(vaeEncoder, 'vae_encoder', ['sample']);
  const encoderType = floatType(encoderIn, 'vae_encoder');
  const encoderOut = pickOutput(vaeEncoder, 'vae_encoder', ['latent_sample', 'latent', 'latent_parameters']);
  // The UNet, with the TensorRT SVD export's names.
  const sample = requireInput(unet, 'unet', 'sample');
  const timestep = requireInput(unet, 'unet', 'timestep');
  const hidden = requireInput(unet, 'unet', 'encoder_hidden_states');
  const timeIds = requireInput(unet, 'unet', 'added_time_ids');
  const unetOut = pickOutput(unet, 'unet', ['latent']);
  const types = {
    sample: floatType(sample, 'unet'),
    timestep: floatType(timestep, 'unet'),
    hidden: floatType(hidden, 'unet'),
    timeIds: floatType(timeIds, 'unet'),
  };
  if (sample.shape.length !== 5)
    throw new Error('unet: sample must be [batch, frames, channels, height, width]');
  const sampleChannels = fixedDim(sample, 2);
  if (sampleChannels !== undefined && sampleChannels !== 2 * lc) {
    throw new Error(`unet: sample has ${sampleChannels} channels, expected 2 × ${lc} latent channels`);
  }
  const framesPerPass = configs.framesPerPass ?? fixedDim(sample, 1);
  if (framesPerPass === undefined) throw new Error('unet/config.json gives no num_frames');
  if (framesPerPass < 2) throw new Error('unet: at least 2 frames per pass are needed to chain segments');
  // The temporal VAE decoder: latent_sample (or latent) → sample (or frames); some exports also
  // take the chunk's frame count.
  const decoderIn = pickInput(vaeDecoder, 'vae_decoder', ['latent_sample', 'latent']);
  const decoderType = floatType(decoderIn, 'vae_decoder');
  const decoderOut = pickOutput(vaeDecoder, 'vae_decoder', ['sample', 'frames']);
  const frameCountInputs = vaeDecoder.inputNames
    .filter((name) => name !== decoderIn.name)
    .map((name) => requireInput(vaeDecoder, 'vae_decoder', name));
  const [sampleHeight, sampleWidth] = configs.sampleSize ?? [];
  const f = configs.vaeScaleFactor;

  return {
    id: entry.id,
    latentChannels: lc,
    vaeScaleFactor: f,
    framesPerPass,
    nativeWidth: sampleWidth === undefined ? SVD_DEFAULT_SIZE.width : sampleWidth * f,
    nativeHeight: sampleHeight === undefined ? SVD_DEFAULT_SIZE.height : sampleHeight * f,
    dtype: types.sample === 'float16' ? 'fp16' : 'fp32',
    clip: { ...configs.clip, size: clipSize },
    scheduler: configs.scheduler,

    async embedImage(values) {
      const feeds = { [pixelValues.name]: floatTensor(pixelType, values, [1, 3, clipSize, clipSize]) };
      return floatOutput(await imageEncoder.run(feeds), 'image_encoder', embedsOut).data;
    },

    async encodeImage(pixels, width, height) {
      const feeds = { [encoderIn.name]: floatTensor(encoderType, pixels, [1, 3, height, width]) };
      const { data, dims } = floatOutput(await vaeEncoder.run(feeds), 'vae_encoder', encoderOut);
      // Distribution parameters (mean ++ log-variance): the mode is the mean half.
      return dims[1] === 2 * lc ? data.slice(0, data.length / 2) : data;
    },

    async predict(input: UnetInput) {
      const [rows] = input.dims;
      const embedDim = input.imageEmbeds.length / rows;
      const feeds = {
        sample: floatTensor(types.sample, input.sample, input.dims),
        timestep: floatTensor(
          types.timestep,
          Float32Array.of(input.timestep),
          timestep.shape.length === 0 ? [] : [1],
        ),
        encoder_hidden_states: floatTensor(types.hidden, input.imageEmbeds, [rows, 1, embedDim]),
        added_time_ids: floatTensor(types.timeIds, input.addedTimeIds, [
          rows,
          input.addedTimeIds.length / rows,
        ]),
      };
      return floatOutput(await unet.run(feeds), 'unet', unetOut).data;
    },

    async decodeFrames(latents, frames, h, w) {
      const scaled = latents.map((x) => x / configs.scalingFactor);
      const feeds = { [decoderIn.name]: floatTensor(decoderType, scaled, [frames, lc, h, w]) };
      for (const spec of frameCountInputs) feeds[spec.name] = integerScalar(spec, 'vae_decoder', frames);
      return floatOutput(await vaeDecoder.run(feeds), 'vae_decoder', decoderOut).data;
    },

    async dispose() {
      await Promise.all([imageEncoder, vaeEncoder, unet, vaeDecoder].map((s) => s.release()));
    },
  };
}
