// One job, start to finish: the clip's geometry, the input image decoded twice by ffmpeg (a
// 224-pixel square for CLIP, the clip's size for the VAE, both stretched with bicubic filtering as
// diffusers resizes), then segment by segment: noise-augment and VAE-encode the conditioning frame,
// denoise the pass, decode the frames still needed in chunks and write them to the sink. Only one
// segment's latents and one decode chunk are held at a time, whatever the clip's length.
import { SeededRandom } from '@switchboard/models';
import type { RenderRequest, VideoOutput } from '../backend.js';
import { decodeImage } from '../../media/decode.js';
import type { FfmpegPaths } from '../../media/run-ffmpeg.js';
import { videoJob } from './clip-spec.js';
import { denoiseSegment, type GuidanceRange } from './denoise.js';
import { clipPixelValues, frameToRgb, vaePixels } from './pixels.js';
import { createVideoScheduler } from './scheduler.js';
import { decodeChunks, planSegments } from './segments.js';
import type { VideoModel } from './video-model.js';

export interface RenderSettings {
  /** Denoising steps per segment. */
  readonly steps: number;
  readonly guidance: GuidanceRange;
  /** Frames the VAE decodes at once (bounds the decoder's memory). */
  readonly decodeChunkSize: number;
  readonly ffmpeg: FfmpegPaths;
}

/** Fraction done over a fixed number of units (denoising steps and decode chunks). */
function progressOver(total: number, report: (fraction: number) => void): () => void {
  let done = 0;
  return () => {
    done += 1;
    report(Math.min(1, done / total));
  };
}

export async function renderVideo(
  model: VideoModel,
  request: RenderRequest,
  out: VideoOutput,
  settings: RenderSettings,
): Promise<void> {
  const job = videoJob(request.params, { width: model.nativeWidth, height: model.nativeHeight });
  const { width, height, fps } = job.spec;
  const { signal } = request;
  const f = model.vaeScaleFactor;
  const [latentHeight, latentWidth] = [height / f, width / f];
  const frameSize = model.latentChannels * latentHeight * latentWidth;
  const segments = planSegments(job.spec.frames, model.framesPerPass);
  const chunksPerSegment = segments.map((s) => decodeChunks(s, settings.decodeChunkSize));
  const units = segments.length * settings.steps + chunksPerSegment.reduce((n, c) => n + c.length, 0);
  const tick = progressOver(units, (fraction) => request.progress(fraction));
  const scheduler = createVideoScheduler(model.scheduler, settings.steps);
  const random = new SeededRandom(job.seed);

  const square = { width: model.clip.size, height: model.clip.size, fit: 'stretch' } as const;
  const clipRgb = await decodeImage(settings.ffmpeg, request.inputs.image, square, signal);
  let conditioningRgb = await decodeImage(
    settings.ffmpeg,
    request.inputs.image,
    { width, height, fit: 'stretch' },
    signal,
  );
  signal.throwIfAborted();
  // The input image's CLIP embedding conditions every segment: it keeps later segments anchored to
  // the picture instead of drifting with each re-encoded frame.
  const imageEmbeds = await model.embedImage(clipPixelValues(clipRgb, model.clip));
  const addedTimeIds = [fps - 1, job.motionBucketId, job.noiseAugStrength] as const;
  request.logger.debug(
    { ...job.spec, segments: segments.length, steps: settings.steps },
    'video render started',
  );

  const sink = await out.frames(job.spec);
  for (const chunks of chunksPerSegment) {
    signal.throwIfAborted();
    const pixels = vaePixels(conditioningRgb, job.noiseAugStrength, random);
    const imageLatents = await model.encodeImage(pixels, width, height);
    const conditioning = { imageEmbeds, imageLatents, addedTimeIds, latentHeight, latentWidth };
    const latents = await denoiseSegment(model, scheduler, conditioning, random, {
      guidance: settings.guidance,
      signal,
      onStep: tick,
    });
    for (const [start, end] of chunks) {
      signal.throwIfAborted();
      const count = end - start;
      const chunk = latents.subarray(start * frameSize, end * frameSize);
      const decoded = await model.decodeFrames(chunk, count, latentHeight, latentWidth);
      for (let i = 0; i < count; i++) {
        conditioningRgb = frameToRgb(decoded, i, width, height);
        await sink.write(conditioningRgb);
      }
      tick();
    }
  }
}
