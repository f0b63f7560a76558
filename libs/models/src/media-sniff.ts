// Which ffmpeg demuxer may read a tenant's upload, from the container's own bytes. ffmpeg left to
// guess follows playlists and lists (HLS, concat, SDP, image sequences) hidden behind a plausible
// start, and so opens other files on the worker; a forced demuxer that has no such indirection,
// chosen only when the bytes really are that container, cannot. Anything else is refused unread.

export type MediaKind = 'image' | 'video' | 'audio';

export interface SniffedMedia {
  /** ffmpeg's demuxer for `-f`: never one that opens further inputs. */
  readonly demuxer: string;
  /** The kinds this container may hold (MP4, WebM and Ogg carry video or only sound). */
  readonly kinds: readonly MediaKind[];
}

/** Enough bytes to recognise every container below, except an MP3's leading ID3 tag. */
export const SNIFF_HEAD_BYTES = 16;
/** An ID3 tag (cover art included) longer than this is not looked past: the upload is refused. */
export const MAX_ID3_TAG_BYTES = 8 * 1024 * 1024;

const ID3_HEADER_BYTES = 10;

const ascii = (bytes: Uint8Array, start: number, end: number) =>
  bytes.length < end ? '' : Buffer.from(bytes.subarray(start, end)).toString('latin1');

const startsWith = (bytes: Uint8Array, signature: readonly number[], at = 0) =>
  bytes.length >= at + signature.length && signature.every((byte, i) => bytes[at + i] === byte);

/** The bytes an ID3v2 tag at the start takes, by its syncsafe size (footer included); 0 if none. */
function id3Length(head: Uint8Array): number {
  if (ascii(head, 0, 3) !== 'ID3' || head.length < ID3_HEADER_BYTES) return 0;
  const sizeBytes = head.subarray(6, 10);
  // A syncsafe integer: seven bits a byte, the top bit always clear.
  if (sizeBytes.some((byte) => byte >= 0x80)) return -1;
  const size = sizeBytes.reduce((sum, byte) => sum * 128 + byte, 0);
  const footer = ((head[5] ?? 0) & 0x10) !== 0 ? ID3_HEADER_BYTES : 0;
  return ID3_HEADER_BYTES + size + footer;
}

/** How many leading bytes `sniffMedia` needs to decide, given at least SNIFF_HEAD_BYTES of them. */
export function sniffBytesNeeded(head: Uint8Array): number {
  const tag = id3Length(head);
  if (tag <= 0 || tag > MAX_ID3_TAG_BYTES) return SNIFF_HEAD_BYTES;
  return tag + 4;
}

/** An MPEG audio frame header (layer I–III) at `at`: sync, and no reserved field values. */
function isMpegAudioFrame(bytes: Uint8Array, at: number): boolean {
  if (bytes.length < at + 4) return false;
  const [b0 = 0, b1 = 0, b2 = 0] = bytes.subarray(at, at + 3);
  if (b0 !== 0xff || (b1 & 0xe0) !== 0xe0) return false;
  const version = (b1 >> 3) & 0x03;
  const layer = (b1 >> 1) & 0x03;
  const bitrate = b2 >> 4;
  const sampleRate = (b2 >> 2) & 0x03;
  return version !== 0x01 && layer !== 0x00 && bitrate !== 0x0f && sampleRate !== 0x03;
}

const image = (demuxer: string): SniffedMedia => ({ demuxer, kinds: ['image'] });
const audio = (demuxer: string): SniffedMedia => ({ demuxer, kinds: ['audio'] });
const container = (demuxer: string): SniffedMedia => ({ demuxer, kinds: ['video', 'audio'] });

/**
 * The demuxer for the container `head` (the first `sniffBytesNeeded(head)` bytes, or the whole
 * file if shorter) holds, or null when it is none the services accept.
 */
export function sniffMedia(head: Uint8Array): SniffedMedia | null {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return image('png_pipe');
  if (startsWith(head, [0xff, 0xd8, 0xff])) return image('jpeg_pipe');
  if (ascii(head, 0, 4) === 'RIFF') {
    const form = ascii(head, 8, 12);
    if (form === 'WEBP' && ascii(head, 12, 15) === 'VP8') return image('webp_pipe');
    if (form === 'WAVE') return audio('wav');
    if (form === 'AVI ') return { demuxer: 'avi', kinds: ['video'] };
    return null;
  }
  if (ascii(head, 0, 4) === 'OggS' && head[4] === 0) return container('ogg');
  // fLaC is followed by its mandatory first metadata block, STREAMINFO (type 0).
  if (ascii(head, 0, 4) === 'fLaC' && head.length > 4 && ((head[4] ?? 0) & 0x7f) === 0) return audio('flac');
  if (ascii(head, 4, 8) === 'ftyp') return ftypBox(head);
  if (startsWith(head, [0x1a, 0x45, 0xdf, 0xa3])) return container('matroska');
  const tag = id3Length(head);
  if (tag < 0 || tag > MAX_ID3_TAG_BYTES) return null;
  // ID3 is a tag, not a container: what follows it must be MPEG audio itself.
  if (isMpegAudioFrame(head, tag)) return audio('mp3');
  return null;
}

/** An ISO base media file: its first box is `ftyp`, at least as long as its major brand. */
function ftypBox(head: Uint8Array): SniffedMedia | null {
  const size = Buffer.from(head.subarray(0, 4)).readUInt32BE(0);
  if (size < 12 || head.length < 12) return null;
  const brand = ascii(head, 8, 12);
  if (brand === 'M4A ' || brand === 'M4B ') return audio('mov');
  return container('mov');
}

/** The demuxer for an upload of `kind`, or null when its bytes are not such media. */
export function demuxerFor(head: Uint8Array, kind: MediaKind): string | null {
  const found = sniffMedia(head);
  return found?.kinds.includes(kind) ? found.demuxer : null;
}
