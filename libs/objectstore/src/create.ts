import { SCREENSHOTS_PREFIX } from './layout.js';
import { LocalObjectStore } from './local.js';
import type { ObjectStore } from './object-store.js';
import { S3ObjectStore } from './s3.js';
import type { WebIdentityConfig } from './web-identity.js';

export interface ObjectStoreConfig {
  /** S3 / MinIO; when absent, the local directory is used. */
  s3?: {
    endpoint: string;
    accessKey: string;
    secretKey: string;
    webIdentity?: WebIdentityConfig;
    bucket: string;
    region: string;
  };
  /** The local fallback's directory. */
  directory: string;
  /** Key prefix → days to keep objects under it (S3 lifecycle rules). */
  retentionDays: Record<string, number>;
}

/** Default retention: screenshots 7 days (they outlive their session); images and videos until removed. */
export const defaultRetentionDays: Readonly<Record<string, number>> = Object.freeze({
  [SCREENSHOTS_PREFIX]: 7,
});

/** S3 when an endpoint is configured, else the local directory. */
export function createObjectStore(config: ObjectStoreConfig): ObjectStore {
  if (config.s3) return new S3ObjectStore({ ...config.s3, retentionDays: config.retentionDays });
  return new LocalObjectStore(config.directory);
}
