import { Metadata } from '@grpc/grpc-js';

/**
 * The call metadata the gateway sets on every worker call. Workers trust `x-key-id`: only the
 * gateway can reach them, and it sets the id of the key it authenticated (never the key itself).
 */
export const metadataKeys = {
  requestId: 'x-request-id',
  keyId: 'x-key-id',
} as const;

export interface CallIdentity {
  requestId: string;
  /** The caller's API key id; absent for the gateway's own calls (health, admin listings). */
  keyId?: string | undefined;
}

/** The Metadata the gateway sends with a call made on behalf of a request. */
export function callMetadata({ requestId, keyId }: CallIdentity): Metadata {
  const metadata = new Metadata();
  metadata.set(metadataKeys.requestId, requestId);
  if (keyId !== undefined && keyId !== '') metadata.set(metadataKeys.keyId, keyId);
  return metadata;
}

/** A metadata value as a string, or undefined when absent, binary or empty. */
export function readMetadata(metadata: Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
