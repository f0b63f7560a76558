import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  type GetOptions,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type ReadyReport,
  type StoredObject,
  InvalidObjectKeyError,
  rangeWithin,
  validateKey,
  validateMetadata,
  validateRange,
} from './object-store.js';

interface Sidecar {
  contentType: string;
  size: number;
  metadata: Record<string, string>;
}

function isNotFound(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * A directory as the object store (the local default). Bodies live under `objects/<key>`, their
 * description in a sidecar `meta/<key>.json`; both are written to `tmp/` and renamed into place,
 * body first, so the sidecar is the commit: an object without one does not exist.
 */
export class LocalObjectStore implements ObjectStore {
  private readonly root: string;

  constructor(directory: string) {
    this.root = resolve(directory);
  }

  private path(area: 'objects' | 'meta', key: string): string {
    validateKey(key);
    const base = join(this.root, area);
    const path = resolve(base, area === 'meta' ? `${key}.json` : key);
    if (!path.startsWith(base + sep)) throw new InvalidObjectKeyError('outside the store');
    return path;
  }

  private tempPath(): string {
    return join(this.root, 'tmp', randomUUID());
  }

  async ensureReady(): Promise<ReadyReport> {
    await Promise.all(
      (['objects', 'meta', 'tmp'] as const).map((d) => mkdir(join(this.root, d), { recursive: true })),
    );
    return { lifecycle: 'none' };
  }

  async put(
    key: string,
    body: Buffer | Readable,
    { contentType, metadata, size }: PutOptions,
  ): Promise<void> {
    const objectPath = this.path('objects', key);
    const metaPath = this.path('meta', key);
    validateMetadata(metadata);
    await mkdir(join(this.root, 'tmp'), { recursive: true });
    const bodyTemp = this.tempPath();
    const metaTemp = this.tempPath();
    try {
      let written = 0;
      const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
      source.on('data', (chunk: Buffer) => (written += chunk.length));
      await pipeline(source, createWriteStream(bodyTemp, { flags: 'wx' }));
      if (size !== undefined && size !== written) throw new Error(`body length ${written}, expected ${size}`);
      const sidecar: Sidecar = { contentType, size: written, metadata: { ...metadata } };
      await writeFile(metaTemp, JSON.stringify(sidecar), { flag: 'wx' });
      await Promise.all([
        mkdir(dirname(objectPath), { recursive: true }),
        mkdir(dirname(metaPath), { recursive: true }),
      ]);
      await rename(bodyTemp, objectPath);
      await rename(metaTemp, metaPath);
    } finally {
      await Promise.all([rm(bodyTemp, { force: true }), rm(metaTemp, { force: true })]);
    }
  }

  async stat(key: string): Promise<ObjectInfo | null> {
    const metaPath = this.path('meta', key);
    let raw: string;
    try {
      raw = await readFile(metaPath, 'utf8');
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
    const sidecar = JSON.parse(raw) as Sidecar;
    return { contentType: sidecar.contentType, size: sidecar.size, metadata: sidecar.metadata };
  }

  async get(key: string, options: GetOptions = {}): Promise<StoredObject | null> {
    const objectPath = this.path('objects', key);
    if (options.range) validateRange(options.range);
    const info = await this.stat(key);
    if (!info) return null;
    let handle;
    try {
      handle = await open(objectPath, 'r');
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
    try {
      const { size } = await handle.stat();
      // Trust the file itself for the length we promise; the sidecar may describe an older body.
      if (!options.range) return { ...info, size, stream: handle.createReadStream({ autoClose: true }) };
      const range = rangeWithin(options.range, size);
      const stream = handle.createReadStream({ autoClose: true, start: range.start, end: range.end });
      return { ...info, size, range, stream };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    const metaPath = this.path('meta', key);
    const objectPath = this.path('objects', key);
    await rm(metaPath, { force: true });
    await rm(objectPath, { force: true });
  }
}
