import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';

// s3rver ships no types; this is the part of it the tests use.
export interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: Server;
}
type S3rverClass = new (options: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
}) => S3rverInstance;

/** s3rver, a real S3-protocol server (account `S3RVER` / `S3RVER`), for the store's tests. */
export const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;
