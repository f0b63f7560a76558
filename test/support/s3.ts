import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3rver } from '@switchboard/objectstore/test-support';

export interface S3Server {
  /** `http://127.0.0.1:<port>`, for S3_ENDPOINT. */
  endpoint: string;
  accessKey: string;
  secretKey: string;
  region: string;
  /** Every request the server has answered, as `METHOD path?query`, oldest first. */
  requests: string[];
  /** The environment a process needs to use this server with `bucket`. */
  env(bucket: string): Record<string, string>;
  stop(): Promise<void>;
}

/**
 * A real S3-protocol server (s3rver) on a free loopback port with its own temporary directory.
 * Path-style, region us-east-1, s3rver's built-in account `S3RVER` / `S3RVER`.
 */
export async function startS3(): Promise<S3Server> {
  const directory = await mkdtemp(join(tmpdir(), 'sb-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  let port: number;
  try {
    ({ port } = await server.run());
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  const requests: string[] = [];
  server.httpServer?.on('request', (req: IncomingMessage) => requests.push(`${req.method} ${req.url}`));
  const endpoint = `http://127.0.0.1:${port}`;
  let stopped = false;
  return {
    endpoint,
    accessKey: 'S3RVER',
    secretKey: 'S3RVER',
    region: 'us-east-1',
    requests,
    env: (bucket) => ({
      S3_ENDPOINT: endpoint,
      S3_ACCESS_KEY: 'S3RVER',
      S3_SECRET_KEY: 'S3RVER',
      S3_BUCKET: bucket,
      S3_REGION: 'us-east-1',
    }),
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
