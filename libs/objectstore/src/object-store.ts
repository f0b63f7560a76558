import type { Readable } from 'node:stream';

/** User-metadata key naming the API key id that owns an object (gateway ownership checks). */
export const OWNER_KEY_ID_METADATA = 'owner-key-id';

export interface PutOptions {
  contentType: string;
  /** User metadata: lowercase names of letters, digits and dashes; printable ASCII values. */
  metadata: Record<string, string>;
  /**
   * The body's length when it is a stream and the caller knows it: S3 then takes it in one PUT.
   * Without it a stream goes up as a multipart upload (MinIO and S3 have it; s3rver does not).
   */
  size?: number;
}

export interface ObjectInfo {
  contentType: string;
  size: number;
  metadata: Record<string, string>;
}

export interface StoredObject extends ObjectInfo {
  /** The body (or the asked range of it), streamed; the caller must consume or destroy it. */
  stream: Readable;
  /** Set when a range was asked: the bytes the stream carries (`size` stays the whole object's). */
  range?: ByteRange;
}

/** Bytes `start` to `end` of an object, both inclusive (as HTTP's `Content-Range` counts them). */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

export interface GetOptions {
  /**
   * Read only these bytes, so that seeking in a long video does not read (or, from S3, download)
   * all of it. An `end` past the object's last byte is cut to it; a `start` past it fails.
   */
  range?: ByteRange;
}

export interface ReadyReport {
  /** Whether the retention lifecycle rules were applied (`unsupported`: the server lacks them). */
  lifecycle: 'applied' | 'unsupported' | 'none';
}

/** The shared object store: screenshots, generated images, videos. */
export interface ObjectStore {
  put(key: string, body: Buffer | Readable, options: PutOptions): Promise<void>;
  /** The object, or null when there is none. */
  get(key: string, options?: GetOptions): Promise<StoredObject | null>;
  /** The object's description, or null when there is none. */
  stat(key: string): Promise<ObjectInfo | null>;
  /** Removes the object; removing a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** Creates what the store needs (directory, bucket, retention rules). */
  ensureReady(): Promise<ReadyReport>;
}

/** A key that may not be used: it could escape the store's root or is otherwise malformed. */
export class InvalidObjectKeyError extends Error {
  constructor(reason: string) {
    super(`invalid object key: ${reason}`);
    this.name = 'InvalidObjectKeyError';
  }
}

/** The store could not be reached or failed; messages never carry bucket names or paths. */
export class ObjectStoreError extends Error {
  /** The store could not be reached or was overloaded: the same call may work later. */
  readonly unreachable: boolean;

  constructor(message: string, options?: { cause?: unknown; unreachable?: boolean }) {
    super(message, options);
    this.name = 'ObjectStoreError';
    this.unreachable = options?.unreachable ?? false;
  }
}

/** A range a caller may ask for: whole non-negative numbers, `start` ≤ `end`. */
export function validateRange(range: ByteRange): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start)
    throw new TypeError(`invalid byte range ${String(start)}-${String(end)}`);
}

/** The asked range within an object of `size` bytes, or an error when it starts past the end. */
export function rangeWithin(range: ByteRange, size: number): ByteRange {
  if (range.start >= size) throw new ObjectStoreError('object store read failed (range not satisfiable)');
  return { start: range.start, end: Math.min(range.end, size - 1) };
}

const MAX_KEY_BYTES = 1024;

/**
 * Keys are relative slash-separated paths of plain segments: no `.`/`..` segments, no empty
 * segment (so no leading, trailing or doubled slash), no backslash, no NUL or control character.
 */
export function validateKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw new InvalidObjectKeyError('empty');
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw new InvalidObjectKeyError('too long');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(key)) throw new InvalidObjectKeyError('control character');
  if (key.includes('\\')) throw new InvalidObjectKeyError('backslash');
  for (const segment of key.split('/')) {
    if (segment === '') throw new InvalidObjectKeyError('empty segment or absolute path');
    if (segment === '.' || segment === '..') throw new InvalidObjectKeyError('relative segment');
  }
}

const METADATA_NAME = /^[a-z0-9][a-z0-9-]{0,127}$/;
const METADATA_VALUE = /^[\x20-\x7e]{0,1024}$/;

export function validateMetadata(metadata: Record<string, string>): void {
  for (const [name, value] of Object.entries(metadata)) {
    if (!METADATA_NAME.test(name)) throw new TypeError(`invalid metadata name: ${name}`);
    if (typeof value !== 'string' || !METADATA_VALUE.test(value))
      throw new TypeError(`invalid metadata value for ${name}`);
  }
}
