// A job's media on its way in: file parts and data: URLs are stored under the job
// (animation-inputs/<job id>/<field>) as they arrive — checked by their first bytes, counted
// against the tier's upload limit, hashed for idempotency — and never held whole in memory;
// URLs this API returned are checked to belong to the caller and used where they are.
import { createHash } from 'node:crypto';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { dependencyUnavailable, SwitchboardError } from '@switchboard/errors';
import {
  InvalidObjectKeyError,
  OWNER_KEY_ID_METADATA,
  imageKeyOfFile,
  inputKey,
  videoKeyOfFile,
  type ObjectStore,
} from '@switchboard/objectstore';
import { acceptedType, expectation, kindOfField, SNIFF_BYTES } from './media-type.js';
import type { MediaField } from './request.js';

export interface StoredMedia {
  /** Object key the worker reads. */
  readonly key: string;
  /** What the body hash takes for this medium: the content's sha256, or the reference. */
  readonly identity: string;
}

const IMAGE_URL = /^\/api\/images\/([^/]+)$/;
const VIDEO_URL = /^\/api\/videos\/([^/]+)$/;
/** The object key behind an image URL (for `image`) or a video URL, not a poster (for `driving_video`). */
function referencedKey(field: MediaField, url: string): string | null {
  if (field === 'image') {
    const file = IMAGE_URL.exec(url)?.[1];
    return file === undefined ? null : imageKeyOfFile(file);
  }
  if (field !== 'driving_video') return null;
  const file = VIDEO_URL.exec(url)?.[1];
  const video = file === undefined ? null : videoKeyOfFile(file);
  return video && !video.poster ? video.key : null;
}

const DATA_URL = /^data:([a-z]+)\/([A-Za-z0-9.+-]+);base64,/;

const invalid = (field: MediaField, message: string) =>
  new SwitchboardError('invalid_request', { message: `${field}: ${message}`, param: field });

/** Reads the first `count` bytes (or all, if fewer) and gives back a stream that still starts with them. */
async function peek(source: Readable, count: number): Promise<{ head: Buffer; whole: Readable }> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Breaking out of this loop must leave the stream open for the replay below.
  for await (const chunk of source.iterator({ destroyOnReturn: false })) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= count) break;
  }
  const head = Buffer.concat(chunks);
  async function* replay() {
    yield head;
    yield* source;
  }
  return { head: head.subarray(0, count), whole: Readable.from(replay(), { objectMode: false }) };
}

export class JobMedia {
  private readonly stored: string[] = [];
  private received = 0;

  constructor(
    private readonly store: ObjectStore,
    readonly jobId: string,
    private readonly ownerKeyId: string,
    /** The tier's upload limit, for the sum of every medium of the request. */
    private readonly budgetBytes: number,
  ) {}

  /** A file part or decoded data: URL, stored as it streams in. */
  async fromStream(field: MediaField, source: Readable): Promise<StoredMedia> {
    const { head, whole } = await peek(source, SNIFF_BYTES);
    const contentType = acceptedType(field, head);
    if (contentType === null) {
      whole.resume();
      throw invalid(field, `expected ${expectation[field]}`);
    }
    const hash = createHash('sha256');
    const metered = new Transform({
      transform: (chunk: Buffer, _encoding, done: TransformCallback) => {
        this.received += chunk.length;
        if (this.received > this.budgetBytes) {
          done(
            new SwitchboardError('payload_too_large', {
              message: "The media are larger than the key's tier allows.",
              param: field,
            }),
          );
          return;
        }
        hash.update(chunk);
        done(null, chunk);
      },
    });
    const key = inputKey(this.jobId, field);
    this.stored.push(key);
    let failure: Error | undefined;
    whole.on('error', (error) => metered.destroy(error));
    metered.on('error', (error: Error) => (failure ??= error));
    whole.pipe(metered);
    try {
      await this.store.put(key, metered, {
        contentType,
        metadata: { [OWNER_KEY_ID_METADATA]: this.ownerKeyId, 'job-id': this.jobId },
      });
    } catch (error) {
      whole.resume();
      // The stream's own failure (too large, client gone) says more than the store's.
      if (failure) throw failure;
      throw error;
    }
    if (failure) throw failure;
    return { key, identity: `sha256:${hash.digest('hex')}` };
  }

  /** A JSON string field: a data: URL (decoded and stored) or a URL of the caller's own media. */
  async fromString(field: MediaField, value: string): Promise<StoredMedia> {
    const data = DATA_URL.exec(value);
    if (data) {
      const declared = data[1];
      if (declared !== kindOfField[field])
        throw invalid(field, `expected a data:${kindOfField[field]}/… URL`);
      const base64 = value.slice(data[0].length).replace(/\s+/g, '');
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) throw invalid(field, 'the data: URL is not valid base64');
      return this.fromStream(field, Readable.from([Buffer.from(base64, 'base64')]));
    }
    const key = referencedKey(field, value);
    if (!key) {
      throw invalid(
        field,
        field === 'image'
          ? 'expected a data:image/png|jpeg|webp;base64 URL, an /api/images/… URL of this key, or a file part'
          : field === 'driving_video'
            ? 'expected a data:video/…;base64 URL, an /api/videos/… URL of this key, or a file part'
            : 'expected a data:audio/…;base64 URL or a file part',
      );
    }
    await this.checkOwned(key);
    return { key, identity: `ref:${key}` };
  }

  /**
   * Another key's file answers exactly like a missing one (404 not_found), so a caller learns
   * nothing about ids it does not own.
   */
  private async checkOwned(key: string): Promise<void> {
    let owner: string | undefined;
    try {
      owner = (await this.store.stat(key))?.metadata[OWNER_KEY_ID_METADATA];
    } catch (error) {
      if (error instanceof InvalidObjectKeyError) owner = undefined;
      else throw dependencyUnavailable('The file store is unavailable.', error);
    }
    if (owner !== this.ownerKeyId) {
      throw new SwitchboardError('not_found', { message: 'No such file for this key.' });
    }
  }

  /** Removes what this request stored (a refused or duplicate submission keeps nothing). */
  async discard(): Promise<void> {
    await Promise.all(this.stored.map((key) => this.store.delete(key).catch(() => undefined)));
  }
}
