// Container sniffing: each accepted container by its real signature, an ID3 tag looked past by its
// declared size to a real MPEG frame, and look-alikes (a playlist behind a tag, a list, SDP) refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  demuxerFor,
  MAX_ID3_TAG_BYTES,
  sniffBytesNeeded,
  sniffMedia,
  SNIFF_HEAD_BYTES,
} from './media-sniff.js';

const bytes = (...parts: (string | number[] | Uint8Array)[]) =>
  Buffer.concat(
    parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part))),
  );

/** An ID3v2.4 header declaring `size` bytes of tag body. */
const id3 = (size: number) =>
  bytes('ID3', [4, 0, 0, (size >> 21) & 0x7f, (size >> 14) & 0x7f, (size >> 7) & 0x7f, size & 0x7f]);
/** MPEG-1 layer III, 128 kbit/s, 44.1 kHz. */
const mp3Frame = [0xff, 0xfb, 0x90, 0x64];

test('each accepted container gets its own demuxer', () => {
  const cases: [Buffer, string | null][] = [
    [bytes([0x89], 'PNG\r\n\x1a\n', [0, 0, 0, 13]), 'png_pipe'],
    [bytes([0xff, 0xd8, 0xff, 0xe0]), 'jpeg_pipe'],
    [bytes('RIFF', [0, 0, 0, 0], 'WEBPVP8 '), 'webp_pipe'],
    [bytes('RIFF', [0, 0, 0, 0], 'WAVEfmt '), 'wav'],
    [bytes('RIFF', [0, 0, 0, 0], 'AVI LIST'), 'avi'],
    [bytes('OggS', [0, 2]), 'ogg'],
    [bytes('fLaC', [0x80, 0, 0, 34]), 'flac'],
    [bytes([0, 0, 0, 0x20], 'ftypisom', [0, 0, 2, 0]), 'mov'],
    [bytes([0, 0, 0, 0x14], 'ftypqt  '), 'mov'],
    [bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f]), 'matroska'],
    [bytes(mp3Frame), 'mp3'],
    [bytes(id3(4), 'abcd', mp3Frame), 'mp3'],
  ];
  for (const [head, demuxer] of cases)
    assert.equal(sniffMedia(head)?.demuxer ?? null, demuxer, head.toString('hex'));
});

test('look-alikes and indirections are refused', () => {
  const refused = [
    bytes(id3(20), '#EXTM3U\n#EXT-X-VER'), // a playlist behind an ID3 tag
    bytes(id3(0), '#EXTM3U\n'),
    bytes('#EXTM3U\n#EXTINF:1,\nfile:/etc/passwd'),
    bytes("ffconcat version 1.0\nfile '/x.wav'"),
    bytes('v=0\no=- 0 0 IN IP4 127.0.0.1\n'),
    bytes('ID3', [4, 0, 0, 0x80, 0, 0, 0], mp3Frame), // not a syncsafe size
    bytes([0xff, 0xf1, 0x50, 0x80]), // ADTS AAC (layer 0), not MPEG audio
    bytes([0xff, 0xfb, 0xf0, 0x64]), // bad bitrate index
    bytes('RIFF', [0, 0, 0, 0], 'WEBPXXXX'),
    bytes('RIFF', [0, 0, 0, 0], 'CDXA'),
    bytes('fLaC', [0x84]),
    bytes('OggS', [1]),
    bytes([0, 0, 0, 4], 'ftyp'),
    bytes('GIF89a'),
    bytes(''),
  ];
  for (const head of refused) assert.equal(sniffMedia(head), null, head.toString('hex'));
});

test('an ID3 tag is skipped by its declared size, within a limit', () => {
  const head = bytes(id3(1000));
  assert.equal(sniffBytesNeeded(head), 10 + 1000 + 4);
  const full = bytes(id3(1000), Buffer.alloc(1000).toString('latin1'), mp3Frame);
  assert.equal(sniffMedia(full)?.demuxer, 'mp3');
  // A frame sync inside the tag does not count; only what follows the tag does.
  const early = bytes(id3(8), mp3Frame, '#EXTM3U\n');
  assert.equal(sniffMedia(early), null);
  const huge = bytes(id3(MAX_ID3_TAG_BYTES));
  assert.equal(sniffBytesNeeded(huge), SNIFF_HEAD_BYTES);
  assert.equal(sniffMedia(bytes(huge, mp3Frame)), null);
  assert.equal(sniffBytesNeeded(bytes('RIFF')), SNIFF_HEAD_BYTES);
});

test('the container must suit the field it was sent as', () => {
  const wav = bytes('RIFF', [0, 0, 0, 0], 'WAVEfmt ');
  const mp4 = bytes([0, 0, 0, 0x20], 'ftypisom');
  const m4a = bytes([0, 0, 0, 0x20], 'ftypM4A ');
  const png = bytes([0x89], 'PNG\r\n\x1a\n');
  assert.equal(demuxerFor(wav, 'audio'), 'wav');
  assert.equal(demuxerFor(wav, 'video'), null);
  assert.equal(demuxerFor(wav, 'image'), null);
  assert.equal(demuxerFor(mp4, 'audio'), 'mov');
  assert.equal(demuxerFor(mp4, 'video'), 'mov');
  assert.equal(demuxerFor(m4a, 'video'), null);
  assert.equal(demuxerFor(png, 'image'), 'png_pipe');
  assert.equal(demuxerFor(png, 'audio'), null);
});
