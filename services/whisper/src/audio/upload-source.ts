// Where ffmpeg reads an upload from. Most containers decode from a pipe as the bytes arrive; the
// MP4 family (m4a, mp4, mov, 3gp) often keeps its index (`moov`) after the media data, which a
// pipe cannot seek back to — ffmpeg then "succeeds" with no samples. Those uploads are spooled to
// a temporary file first, which ffmpeg reads with seeking; the transcription service spools every
// upload this way while it arrives (spoolUpload). The spool directory has a byte budget shared by
// all uploads and a smaller one per key: an upload that would exceed either is refused with
// no_capacity (one that exceeds a limit alone, with payload_too_large), its partial file removed,
// rather than letting parallel uploads fill the disk.
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { SwitchboardError } from '@switchboard/errors';
import type { ByteBudget, KeyedByteBudget } from './byte-budget.js';

export type UploadSource =
  { kind: 'pipe'; data: AsyncIterable<Uint8Array> } | { kind: 'file'; path: string; remove(): Promise<void> };

/** ISO base media files start with a box whose type, at bytes 4–8, is `ftyp`. */
export function isIsoMedia(head: Uint8Array): boolean {
  return head.length >= 8 && Buffer.from(head.subarray(4, 8)).toString('latin1') === 'ftyp';
}

/** Reads the first `bytes` of `input` and returns them with a stream that replays them first. */
export async function peek(
  input: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  bytes: number,
): Promise<{ head: Uint8Array; data: AsyncIterable<Uint8Array> }> {
  const iterator = Symbol.asyncIterator in input ? input[Symbol.asyncIterator]() : input[Symbol.iterator]();
  const seen: Uint8Array[] = [];
  let length = 0;
  let done = false;
  while (length < bytes) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    seen.push(next.value);
    length += next.value.length;
  }
  async function* replay(): AsyncIterable<Uint8Array> {
    yield* seen;
    if (done) return;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  return { head: Buffer.concat(seen).subarray(0, bytes), data: replay() };
}

export interface Spool {
  readonly dir: string;
  /** Bytes all spooled files together may hold; a spooled file keeps its bytes until removed. */
  readonly budget: ByteBudget;
  /** Bytes the spooled files of one key may hold together; unset: only `budget` bounds a key. */
  readonly perKey?: KeyedByteBudget;
  /** Retry-After of a refusal: about when spooled uploads will have finished. */
  retryAfterSeconds(): number;
}

/** The upload as ffmpeg should read it: piped, or spooled under `spool.dir` when it must seek. */
export async function uploadSource(
  input: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  spool: Spool,
  signal: AbortSignal,
  owner = '',
): Promise<UploadSource> {
  const { head, data } = await peek(input, 12);
  if (!isIsoMedia(head)) return { kind: 'pipe', data };
  return { kind: 'file', ...(await spoolUpload(data, spool, signal, owner)) };
}

export interface SpooledUpload {
  readonly path: string;
  /** Removes the file and gives its bytes back to the budgets. */
  remove(): Promise<void>;
}

/**
 * Writes the whole upload to a file under `spool.dir`, its bytes counted against the spool's
 * budget and `owner`'s (the caller's key) as they arrive. Past a limit the upload is refused and
 * its partial file removed: payload_too_large when it alone is larger than the limit (waiting
 * would not help), else no_capacity with Retry-After (the key's or everyone's other uploads hold
 * the room now).
 */
export async function spoolUpload(
  data: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  spool: Spool,
  signal: AbortSignal,
  owner = '',
): Promise<SpooledUpload> {
  const dir = await mkdtemp(join(spool.dir, 'whisper-upload-'));
  let taken = 0;
  const remove = async () => {
    await rm(dir, { recursive: true, force: true });
    spool.budget.give(taken);
    spool.perKey?.give(owner, taken);
    taken = 0;
  };
  const path = join(dir, 'upload');
  const limit = Math.min(spool.budget.limit, spool.perKey?.limit ?? Infinity);
  let file: WriteStream | undefined;
  try {
    const spooled = createWriteStream(path, { flags: 'wx' });
    file = spooled;
    // Always listened to: a write still in flight when the upload is abandoned (the caller went
    // away) fails once the stream is destroyed, and that late 'error' event, unheard, would take
    // the whole worker down.
    let failed: Error | undefined;
    spooled.on('error', (error) => (failed ??= error));
    for await (const chunk of data) {
      signal.throwIfAborted();
      if (failed) throw failed;
      if (taken + chunk.length > limit) {
        throw new SwitchboardError('payload_too_large', {
          message: `The file is larger than the ${limit} bytes this worker holds for one upload.`,
          param: 'file',
        });
      }
      if (!take(spool, owner, chunk.length)) {
        throw new SwitchboardError('no_capacity', {
          message: 'The worker has no room to spool this upload right now.',
          retryAfterSeconds: spool.retryAfterSeconds(),
        });
      }
      taken += chunk.length;
      if (!file.write(chunk)) await once(file, 'drain', { signal });
    }
    file.end();
    await once(file, 'close');
    signal.throwIfAborted();
    if (failed) throw failed;
    return { path, remove };
  } catch (error) {
    file?.destroy();
    await remove();
    throw error;
  }
}

/** Takes `bytes` from the key's budget and the shared one, or from neither. */
function take(spool: Spool, owner: string, bytes: number): boolean {
  if (spool.perKey && !spool.perKey.tryTake(owner, bytes)) return false;
  if (spool.budget.tryTake(bytes)) return true;
  spool.perKey?.give(owner, bytes);
  return false;
}
