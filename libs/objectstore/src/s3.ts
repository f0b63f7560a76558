import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { Client, type ClientOptions, type LifecycleConfig } from 'minio';
import {
  type GetOptions,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type ReadyReport,
  type StoredObject,
  ObjectStoreError,
  validateKey,
  validateMetadata,
  validateRange,
} from './object-store.js';
import { type WebIdentityConfig, WebIdentityCredentials } from './web-identity.js';

export interface S3StoreConfig {
  /** `http(s)://host[:port]` of the S3 / MinIO server (path-style addressing). */
  endpoint: string;
  /** Static keys; ignored when `webIdentity` is given. */
  accessKey: string;
  secretKey: string;
  /** Short-lived keys from the pod's service-account token instead of static ones. */
  webIdentity?: WebIdentityConfig;
  bucket: string;
  region: string;
  /** Key prefix → days after which objects under it expire (a bucket lifecycle rule each). */
  retentionDays: Record<string, number>;
}

/** The bucket lifecycle document: one enabled expiration rule per prefix. */
export function lifecycleConfig(retentionDays: Record<string, number>): LifecycleConfig {
  return {
    Rule: Object.entries(retentionDays).map(([prefix, days]) => {
      if (!Number.isInteger(days) || days < 1) throw new TypeError(`retention for ${prefix}: days ≥ 1`);
      return {
        ID: `expire-${prefix.replace(/[^A-Za-z0-9-]/g, '-')}`,
        Status: 'Enabled',
        Filter: { Prefix: prefix },
        Expiration: { Days: days },
      };
    }),
  };
}

const META_PREFIX = 'x-amz-meta-';
const standardHeaders = new Set([
  'content-type',
  'cache-control',
  'content-encoding',
  'content-disposition',
  'content-language',
  'expires',
]);

function codeOf(error: unknown): string | undefined {
  return (error as { code?: string } | undefined)?.code;
}

function isMissing(error: unknown): boolean {
  const code = codeOf(error);
  return code === 'NoSuchKey' || code === 'NotFound';
}

/** Codes that say the store is away or overloaded for now, not that the request was wrong. */
const transientCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'InternalError',
  'ServiceUnavailable',
  'SlowDown',
  'RequestTimeout',
]);

/** Store errors keep their S3 code for the logs but never the bucket name in the message. */
function storeError(operation: string, error: unknown): ObjectStoreError {
  const code = codeOf(error);
  return new ObjectStoreError(`object store ${operation} failed${code ? ` (${code})` : ''}`, {
    cause: error,
    unreachable: code !== undefined && transientCodes.has(code),
  });
}

function userMetadata(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase().startsWith(META_PREFIX) && typeof value === 'string')
      metadata[name.slice(META_PREFIX.length).toLowerCase()] = value;
  }
  return metadata;
}

/**
 * What a ranged GET's answer carries: `206` names its bytes in `Content-Range`; a server that
 * ignored the range answered `200` with the whole object. Null when the two disagree.
 */
export function carriedRange(
  contentRange: string | undefined,
  length: number,
): { start: number; end: number; size: number } | null {
  if (contentRange === undefined) return length > 0 ? { start: 0, end: length - 1, size: length } : null;
  const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(contentRange.trim());
  if (!match) return null;
  const [start, end, size] = [Number(match[1]), Number(match[2]), Number(match[3])];
  return end - start + 1 === length && end < size ? { start, end, size } : null;
}

export function parseEndpoint(endpoint: string): { endPoint: string; port: number; useSSL: boolean } {
  const url = new URL(endpoint);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError('S3 endpoint must be an http or https URL');
  if (url.pathname !== '/' && url.pathname !== '') throw new TypeError('S3 endpoint must not have a path');
  const useSSL = url.protocol === 'https:';
  return {
    endPoint: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? Number(url.port) : useSSL ? 443 : 80,
    useSSL,
  };
}

/** S3 or MinIO through the `minio` client, path-style, one bucket. */
export class S3ObjectStore implements ObjectStore {
  private readonly client: Client;
  private readonly bucket: string;
  private readonly region: string;
  private readonly retentionDays: Record<string, number>;

  constructor(config: S3StoreConfig) {
    this.client = new Client({
      ...parseEndpoint(config.endpoint),
      ...(config.webIdentity
        ? {
            // The ESM build's CredentialProvider (which the client loaded here uses) is declared
            // apart from the CommonJS one that ClientOptions names: same class at run time.
            credentialsProvider: new WebIdentityCredentials(
              config.webIdentity,
            ) as unknown as ClientOptions['credentialsProvider'],
          }
        : { accessKey: config.accessKey, secretKey: config.secretKey }),
      region: config.region,
      pathStyle: true,
    });
    this.bucket = config.bucket;
    this.region = config.region;
    this.retentionDays = { ...config.retentionDays };
    lifecycleConfig(this.retentionDays); // fail at construction on a bad retention table
  }

  async ensureReady(): Promise<ReadyReport> {
    try {
      if (!(await this.client.bucketExists(this.bucket))) {
        await this.client.makeBucket(this.bucket, this.region).catch((error: unknown) => {
          // Another replica may have made it in between.
          const code = codeOf(error);
          if (code !== 'BucketAlreadyOwnedByYou' && code !== 'BucketAlreadyExists') throw error;
        });
      }
    } catch (error) {
      throw storeError('bucket set-up', error);
    }
    if (Object.keys(this.retentionDays).length === 0) return { lifecycle: 'none' };
    try {
      await this.client.setBucketLifecycle(this.bucket, lifecycleConfig(this.retentionDays));
      return { lifecycle: 'applied' };
    } catch (error) {
      // Test servers such as s3rver lack lifecycle support; MinIO and S3 have it.
      if (codeOf(error) === 'NotImplemented') return { lifecycle: 'unsupported' };
      throw storeError('lifecycle set-up', error);
    }
  }

  async put(
    key: string,
    body: Buffer | Readable,
    { contentType, metadata, size }: PutOptions,
  ): Promise<void> {
    validateKey(key);
    validateMetadata(metadata);
    const headers: Record<string, string> = { 'Content-Type': contentType };
    for (const [name, value] of Object.entries(metadata)) headers[`${META_PREFIX}${name}`] = value;
    try {
      await this.client.putObject(
        this.bucket,
        key,
        body,
        Buffer.isBuffer(body) ? body.length : size,
        headers,
      );
    } catch (error) {
      throw storeError('write', error);
    }
  }

  async stat(key: string): Promise<ObjectInfo | null> {
    validateKey(key);
    try {
      const stat = await this.client.statObject(this.bucket, key);
      const raw = stat.metaData as Record<string, string>;
      const metadata: Record<string, string> = {};
      // minio strips `x-amz-meta-` but keeps a few standard headers beside user metadata.
      for (const [name, value] of Object.entries(raw)) {
        const lower = name.toLowerCase();
        if (!standardHeaders.has(lower) && !lower.startsWith('x-amz-')) metadata[lower] = value;
      }
      return {
        contentType: raw['content-type'] ?? 'application/octet-stream',
        size: stat.size,
        metadata,
      };
    } catch (error) {
      if (isMissing(error)) return null;
      throw storeError('stat', error);
    }
  }

  async get(key: string, options: GetOptions = {}): Promise<StoredObject | null> {
    validateKey(key);
    const { range } = options;
    if (range) validateRange(range);
    let stream: Readable;
    try {
      // A ranged GET (`Range: bytes=start-end`) asks the server for just those bytes.
      stream = range
        ? await this.client.getPartialObject(this.bucket, key, range.start, range.end - range.start + 1)
        : await this.client.getObject(this.bucket, key);
    } catch (error) {
      if (isMissing(error)) return null;
      if (codeOf(error) === 'InvalidRange')
        throw new ObjectStoreError('object store read failed (range not satisfiable)');
      throw storeError('read', error);
    }
    // The minio client hands back the HTTP response itself: one request gives body and headers.
    const { headers } = stream as IncomingMessage;
    const length = Number(headers['content-length']);
    const carried = range ? carriedRange(headers['content-range'], length) : undefined;
    if (!Number.isSafeInteger(length) || carried === null) {
      stream.destroy();
      throw new ObjectStoreError('object store read failed (no length)');
    }
    return {
      stream,
      size: carried ? carried.size : length,
      ...(carried ? { range: { start: carried.start, end: carried.end } } : {}),
      contentType: headers['content-type'] ?? 'application/octet-stream',
      metadata: userMetadata(headers),
    };
  }

  async delete(key: string): Promise<void> {
    validateKey(key);
    try {
      await this.client.removeObject(this.bucket, key);
    } catch (error) {
      if (isMissing(error)) return;
      throw storeError('delete', error);
    }
  }
}
