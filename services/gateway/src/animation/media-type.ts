// What an uploaded file is, judged by its first bytes (never by a declared type or a file name):
// the gateway refuses what is plainly not an image, a video or audio, and the worker's ffmpeg
// decodes the rest (an undecodable file fails its job with invalid_request / invalid_audio).
import type { MediaField } from './request.js';

export type MediaKind = 'image' | 'video' | 'audio';

export const kindOfField: Record<MediaField, MediaKind> = {
  image: 'image',
  driving_video: 'video',
  audio: 'audio',
};

/** Enough bytes for every signature below. */
export const SNIFF_BYTES = 16;

const ascii = (bytes: Uint8Array, start: number, end: number) =>
  Buffer.from(bytes.subarray(start, end)).toString('latin1');

type Sniffed = { kind: MediaKind | 'container'; type: string } | null;

/** The media type the bytes start like; `container` = could hold video or audio (MP4, WebM, Ogg). */
export function sniff(head: Uint8Array): Sniffed {
  if (head[0] === 0x89 && ascii(head, 1, 4) === 'PNG') return { kind: 'image', type: 'image/png' };
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return { kind: 'image', type: 'image/jpeg' };
  if (ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 12) === 'WEBP')
    return { kind: 'image', type: 'image/webp' };
  if (ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 12) === 'WAVE')
    return { kind: 'audio', type: 'audio/wav' };
  if (ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 11) === 'AVI')
    return { kind: 'video', type: 'video/x-msvideo' };
  if (ascii(head, 0, 3) === 'ID3') return { kind: 'audio', type: 'audio/mpeg' };
  if (head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0) return { kind: 'audio', type: 'audio/mpeg' };
  if (ascii(head, 0, 4) === 'fLaC') return { kind: 'audio', type: 'audio/flac' };
  if (ascii(head, 0, 4) === 'OggS') return { kind: 'container', type: 'application/ogg' };
  if (ascii(head, 4, 8) === 'ftyp') {
    const brand = ascii(head, 8, 12);
    if (brand === 'M4A ' || brand === 'M4B ') return { kind: 'audio', type: 'audio/mp4' };
    return { kind: 'container', type: brand.startsWith('qt') ? 'video/quicktime' : 'video/mp4' };
  }
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) {
    return { kind: 'container', type: 'video/webm' };
  }
  return null;
}

/** The content type to store the media under, or null when the bytes are not of the field's kind. */
export function acceptedType(field: MediaField, head: Uint8Array): string | null {
  const found = sniff(head);
  if (!found) return null;
  const wanted = kindOfField[field];
  if (found.kind === wanted) return found.type;
  // An MP4/WebM/Ogg may carry video or only sound; the worker finds out which.
  if (found.kind === 'container' && wanted !== 'image') {
    return wanted === 'audio' ? found.type.replace(/^video\//, 'audio/') : found.type;
  }
  return null;
}

export const expectation: Record<MediaField, string> = {
  image: 'a PNG, JPEG or WebP image',
  driving_video: 'a video (MP4, MOV, WebM, Ogg, AVI)',
  audio: 'audio (WAV, MP3, FLAC, Ogg, M4A, WebM)',
};
