// How ffmpeg is told to read a tenant's file: the demuxer its bytes prove it to be, and the file
// protocol only. Left to guess, ffmpeg follows playlists and lists behind a plausible start (an
// ID3 tag before an HLS playlist, a concat list) to other files on the worker; a forced demuxer
// that opens nothing further, on a file that really is that container, reads this file alone.
import { open } from 'node:fs/promises';
import { sniffBytesNeeded, sniffMedia, SNIFF_HEAD_BYTES, type MediaKind } from '@switchboard/models';
import { FfmpegError } from './run-ffmpeg.js';

/** The file is no container its field accepts; ffmpeg never saw it (mapped like a decode failure). */
export class UnsupportedMediaError extends FfmpegError {
  constructor(kinds: readonly MediaKind[]) {
    super(`the file is not ${kinds.join(' or ')} media in an accepted container`, '');
    this.name = 'UnsupportedMediaError';
  }
}

async function readHead(path: string, length: number): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await file.read(buffer, 0, length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/** ffmpeg's input arguments for `path` holding one of `kinds`; throws UnsupportedMediaError. */
export async function mediaInput(path: string, kinds: readonly MediaKind[]): Promise<string[]> {
  let head = await readHead(path, SNIFF_HEAD_BYTES);
  const needed = sniffBytesNeeded(head);
  if (needed > head.length) head = await readHead(path, needed);
  const found = sniffMedia(head);
  if (!found?.kinds.some((kind) => kinds.includes(kind))) throw new UnsupportedMediaError(kinds);
  // `file:` so that a path is never read as another protocol's address.
  return ['-f', found.demuxer, '-protocol_whitelist', 'file', '-i', `file:${path}`];
}

/** A raw stream on stdin, its format given by the caller: the pipe is all ffmpeg may open. */
export const stdinInput = ['-protocol_whitelist', 'pipe', '-i', 'pipe:0'] as const;
