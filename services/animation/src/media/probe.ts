// What a media file holds, from ffprobe: checked by content, never by a declared type.
import type { MediaKind } from '@switchboard/models';
import { mediaInput } from './input.js';
import { runToBuffer, type FfmpegPaths } from './run-ffmpeg.js';

export interface VideoStreamInfo {
  readonly codec: string;
  readonly width: number;
  readonly height: number;
  /** Frames per second (the stream's average rate), when the file says. */
  readonly fps: number | undefined;
  /** Frame count, when the container records it (counted with `countFrames` or `countPackets`). */
  readonly frames: number | undefined;
  readonly pixFmt: string;
}

export interface AudioStreamInfo {
  readonly codec: string;
  readonly sampleRate: number;
  readonly channels: number;
}

export interface MediaInfo {
  /** ffprobe's format names, e.g. `mov,mp4,m4a,3gp,3g2,mj2`, `png_pipe`, `wav`. */
  readonly format: string;
  /** Seconds, when known. */
  readonly duration: number | undefined;
  readonly video: VideoStreamInfo | undefined;
  readonly audio: AudioStreamInfo | undefined;
}

interface ProbeJson {
  format?: { format_name?: string; duration?: string };
  streams?: {
    codec_type?: string;
    codec_name?: string;
    width?: number;
    height?: number;
    avg_frame_rate?: string;
    r_frame_rate?: string;
    nb_frames?: string;
    nb_read_frames?: string;
    nb_read_packets?: string;
    pix_fmt?: string;
    sample_rate?: string;
    channels?: number;
  }[];
}

function rate(fraction: string | undefined): number | undefined {
  if (!fraction) return undefined;
  const [num, den] = fraction.split('/').map(Number);
  if (!num || !den || !Number.isFinite(num / den)) return undefined;
  return num / den;
}

const finite = (raw: string | undefined): number | undefined => {
  const value = Number(raw);
  return raw !== undefined && raw !== 'N/A' && Number.isFinite(value) ? value : undefined;
};

/**
 * Probes `path` as `kind` media; throws FfmpegError when ffprobe cannot read it (or it is not such
 * media: UnsupportedMediaError). `countFrames` decodes every frame
 * to count them; `countPackets` counts without decoding (one packet per frame in H.264 MP4s).
 */
export async function probeMedia(
  paths: FfmpegPaths,
  path: string,
  options: { kind: MediaKind; countFrames?: boolean; countPackets?: boolean; signal?: AbortSignal },
): Promise<MediaInfo> {
  const args = ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams'];
  if (options.countFrames) args.push('-count_frames');
  if (options.countPackets) args.push('-count_packets');
  const out = await runToBuffer(
    paths.ffprobe,
    [...args, ...(await mediaInput(path, [options.kind]))],
    options.signal,
  );
  const json = JSON.parse(out.toString('utf8')) as ProbeJson;
  const streams = json.streams ?? [];
  const v = streams.find((s) => s.codec_type === 'video');
  const a = streams.find((s) => s.codec_type === 'audio');
  return {
    format: json.format?.format_name ?? '',
    duration: finite(json.format?.duration),
    video: v && {
      codec: v.codec_name ?? '',
      width: v.width ?? 0,
      height: v.height ?? 0,
      fps: rate(v.avg_frame_rate) ?? rate(v.r_frame_rate),
      frames: finite(v.nb_read_frames) ?? finite(v.nb_read_packets) ?? finite(v.nb_frames),
      pixFmt: v.pix_fmt ?? '',
    },
    audio: a && {
      codec: a.codec_name ?? '',
      sampleRate: finite(a.sample_rate) ?? 0,
      channels: a.channels ?? 0,
    },
  };
}
