// One avatar job, start to end: check the driver, prepare and upload the image and audio, create
// the talk, wait for it, download the video into the work folder, probe it, and hand it to the
// runner's transcoder with the clip's spec. Progress: 0.1 uploaded, 0.2 created, 0.3–0.9 while
// the vendor renders, 0.95 downloaded, 1 transcoded.
import { join } from 'node:path';
import { PermanentJobError, type RenderRequest, type VideoOutput } from '../backend.js';
import { probeMedia } from '../../media/probe.js';
import type { FfmpegPaths } from '../../media/run-ffmpeg.js';
import type { CallContext, DidClient } from './client.js';
import { upstreamFailed, type VendorErrorKind } from './errors.js';
import { waitForTalk } from './poll.js';
import { prepareAudio, prepareImage } from './prepare.js';
import { clipSpec } from './spec.js';
import { buildScript, buildTalkBody } from './wire.js';

export interface RenderDeps {
  readonly client: DidClient;
  readonly ffmpeg: FfmpegPaths;
  readonly apiKey: string;
  readonly deadlineMs: number;
  readonly pollIntervalMs: number;
  readonly defaultVoice: string;
  readonly onVendorError: (kind: VendorErrorKind) => void;
}

export async function renderTalk(deps: RenderDeps, request: RenderRequest, out: VideoOutput): Promise<void> {
  const { params, inputs, signal, workDir } = request;
  // Refuse a job without a driver before spending any vendor call (or credit) on it.
  if (inputs.audio === undefined && !params.text?.trim()) {
    throw new PermanentJobError('invalid_request', 'an avatar job needs audio or text');
  }
  const image = await prepareImage(deps.ffmpeg, inputs.image, signal);
  const audio =
    inputs.audio === undefined
      ? undefined
      : await prepareAudio(deps.ffmpeg, inputs.audio, workDir, params.duration_s, signal);

  // The vendor deadline starts with the first call and covers every call and wait after it.
  const ctx: CallContext = { signal, deadline: Date.now() + deps.deadlineMs, logger: request.logger };
  const source = await deps.client.uploadImage(image.bytes, image.filename, image.type, ctx);
  const audioUrl = audio && (await deps.client.uploadAudio(audio.bytes, audio.filename, audio.type, ctx)).url;
  request.progress(0.1);

  const script = buildScript(params, audioUrl, deps.defaultVoice);
  if (!script) throw new PermanentJobError('invalid_request', 'an avatar job needs audio or text');
  const talk = await deps.client.createTalk(buildTalkBody(source.url, script), ctx);
  request.logger.info({ talk_id: talk.id, script: script.type }, 'talk created');
  request.progress(0.2);

  const done = await waitForTalk(deps.client, talk.id, ctx, {
    intervalMs: deps.pollIntervalMs,
    deadlineMs: deps.deadlineMs,
    apiKey: deps.apiKey,
    onVendorError: deps.onVendorError,
    progress: (fraction) => request.progress(fraction),
  });
  const video = join(workDir, 'avatar-result.mp4');
  await deps.client.download(done.resultUrl, video, ctx);
  request.progress(0.95);

  let info;
  try {
    info = await probeMedia(deps.ffmpeg, video, { kind: 'video', signal });
  } catch (error) {
    signal.throwIfAborted();
    throw upstreamFailed("the avatar service's video could not be read", error);
  }
  const stream = info.video;
  const frameDuration = stream?.frames && stream.fps ? stream.frames / stream.fps : undefined;
  const spec =
    stream &&
    clipSpec(
      {
        width: stream.width,
        height: stream.height,
        fps: stream.fps,
        duration: info.duration ?? done.duration ?? frameDuration,
      },
      params,
      inputs.audio,
    );
  if (!spec) throw upstreamFailed("the avatar service's result has no video of known size and length");
  request.logger.info({ talk_id: talk.id, ...spec, audio: spec.audio !== undefined }, 'talk downloaded');
  await out.transcode(video, spec);
  request.progress(1);
}
