// The job's media made into what D-ID accepts, before anything is sent: D-ID animates JPEG and PNG
// sources only (our API also takes WebP, so that becomes a PNG), and keeps audio as 16 kHz WAV (so
// sending it as such loses nothing, is accepted whatever the caller's container was, and lets the
// audio be cut at `duration_s` so the vendor is not paid to render seconds the job will drop).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PermanentJobError } from '../backend.js';
import { mediaInput } from '../../media/input.js';
import { probeMedia } from '../../media/probe.js';
import { runToBuffer, type FfmpegPaths } from '../../media/run-ffmpeg.js';

export interface UploadFile {
  readonly bytes: Buffer;
  /** D-ID allows up to 50 characters of [a-zA-Z0-9._-]; a fixed name says nothing of the caller. */
  readonly filename: string;
  readonly type: string;
}

/** Runs `work`; an ffmpeg failure becomes `code` (a canceled job still ends with its reason). */
async function orFail<T>(
  work: () => Promise<T>,
  signal: AbortSignal,
  code: string,
  message: string,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    signal.throwIfAborted();
    throw new PermanentJobError(code, message, { cause: error });
  }
}

export async function prepareImage(
  paths: FfmpegPaths,
  path: string,
  signal: AbortSignal,
): Promise<UploadFile> {
  const info = await orFail(
    () => probeMedia(paths, path, { kind: 'image', signal }),
    signal,
    'invalid_request',
    'the image could not be read',
  );
  // By codec, not container name: ffprobe names a still's container after its file extension.
  switch (info.video?.codec) {
    case 'png':
      return { bytes: await readFile(path), filename: 'image.png', type: 'image/png' };
    case 'mjpeg':
      return { bytes: await readFile(path), filename: 'image.jpg', type: 'image/jpeg' };
    default: {
      const input = await orFail(
        () => mediaInput(path, ['image']),
        signal,
        'invalid_request',
        'the image could not be read',
      );
      const args = [
        '-nostdin',
        '-v',
        'error',
        ...input,
        '-frames:v',
        '1',
        '-c:v',
        'png',
        '-f',
        'image2pipe',
        '-',
      ];
      const bytes = await orFail(
        () => runToBuffer(paths.ffmpeg, args, signal),
        signal,
        'invalid_request',
        'the image could not be converted for the avatar service',
      );
      return { bytes, filename: 'image.png', type: 'image/png' };
    }
  }
}

/** The audio as 16 kHz mono 16-bit WAV, cut at `maxSeconds` when given. */
export async function prepareAudio(
  paths: FfmpegPaths,
  path: string,
  workDir: string,
  maxSeconds: number | undefined,
  signal: AbortSignal,
): Promise<UploadFile> {
  // To a file, not a pipe: ffmpeg can only fill in a WAV header's sizes on a seekable output.
  const out = join(workDir, 'avatar-audio.wav');
  const cut = maxSeconds === undefined ? [] : ['-t', String(maxSeconds)];
  const output = [...cut, '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', '-f', 'wav', out];
  await orFail(
    async () => {
      const input = await mediaInput(path, ['audio']);
      return runToBuffer(paths.ffmpeg, ['-nostdin', '-v', 'error', '-y', ...input, ...output], signal);
    },
    signal,
    'invalid_audio',
    'the audio could not be decoded',
  );
  return { bytes: await readFile(out), filename: 'audio.wav', type: 'audio/wav' };
}
