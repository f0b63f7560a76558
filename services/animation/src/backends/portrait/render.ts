// One portrait job: check the driver, prepare the source once (centre crop, appearance volume,
// keypoints), then per frame: driven keypoints → stitching → warping → RGB24 into the sink.
// LivePortrait's Algorithm 1 with stitching on and retargeting off (the retargeting modules need
// eye and lip ratios from a landmark model, which this back-end does not run). The sink opens
// after the first frame is rendered, so the clip's size is the warping model's real output size.
import type { FrameSink, RenderRequest, VideoOutput } from '../backend.js';
import { PermanentJobError } from '../backend.js';
import { decodeImage } from '../../media/decode.js';
import { FfmpegError, type FfmpegPaths } from '../../media/run-ffmpeg.js';
import { openAudioDriver } from './audio-driver.js';
import type { Driver } from './driver.js';
import { applyStitching, sourceKeypoints } from './keypoints.js';
import { drivenKeypoints } from './motion.js';
import type { PortraitModel } from './portrait-model.js';
import { openVideoDriver } from './video-driver.js';

async function openDriver(
  model: PortraitModel,
  request: RenderRequest,
  ffmpeg: FfmpegPaths,
): Promise<Driver> {
  const { inputs, params, signal } = request;
  if (inputs.drivingVideo !== undefined && inputs.audio !== undefined) {
    throw new PermanentJobError('invalid_request', 'Give either driving_video or audio, not both.');
  }
  if (inputs.drivingVideo !== undefined) {
    const { cropSize } = model;
    const keypointInfo = (rgb: Uint8Array) => model.keypointInfo(rgb);
    return openVideoDriver({ ffmpeg, path: inputs.drivingVideo, params, cropSize, keypointInfo }, signal);
  }
  if (inputs.audio !== undefined) {
    if (model.audio === undefined) {
      throw new PermanentJobError(
        'unavailable',
        `The portrait model ${model.id} has no audio-to-motion model.`,
      );
    }
    return openAudioDriver({ ffmpeg, path: inputs.audio, params, model: model.audio }, signal);
  }
  throw new PermanentJobError('invalid_request', 'A portrait job needs driving_video or audio.');
}

/** The source crop: the still scaled to cover the extractors' square, centre kept. */
async function sourceCrop(model: PortraitModel, request: RenderRequest, ffmpeg: FfmpegPaths) {
  const size = { width: model.cropSize, height: model.cropSize, fit: 'cover' as const };
  return decodeImage(ffmpeg, request.inputs.image, size, request.signal).catch((error: unknown) => {
    if (!(error instanceof FfmpegError)) throw error;
    throw new PermanentJobError('invalid_request', 'The image could not be decoded.', { cause: error });
  });
}

export async function renderPortrait(
  model: PortraitModel,
  request: RenderRequest,
  out: VideoOutput,
  ffmpeg: FfmpegPaths,
): Promise<void> {
  const { signal } = request;
  const driver = await openDriver(model, request, ffmpeg);
  const { fps, frames } = driver.timing;
  const crop = await sourceCrop(model, request, ffmpeg);
  const [feature, source] = await Promise.all([model.appearance(crop), model.keypointInfo(crop)]);
  const xs = sourceKeypoints(source);
  request.logger.info({ model: model.id, fps, frames, audio: driver.audio !== undefined }, 'portrait render');

  let sink: FrameSink | undefined;
  let written = 0;
  for await (const motion of driver.motions(signal)) {
    signal.throwIfAborted();
    const xd = drivenKeypoints(source, motion);
    const stitched = applyStitching(xd, await model.stitch(xs, xd));
    const frame = await model.warp(feature, xs, stitched);
    sink ??= await out.frames({ width: frame.width, height: frame.height, fps, frames, audio: driver.audio });
    await sink.write(frame.rgb);
    written += 1;
    request.progress(written / frames);
  }
  if (written !== frames) throw new Error(`rendered ${written} of ${frames} frames`);
}
