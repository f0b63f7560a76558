import { setTimeout as sleep } from 'node:timers/promises';
import { type ServiceError, status as GrpcStatus } from '@grpc/grpc-js';
import { Health, type HealthClient } from '@switchboard/contracts';
import type { ServingStatus } from './health.js';
import { type ClientTransport, plaintextTransport } from './tls.js';

/** A health answer, or UNREACHABLE when there was none in time (down, refused, no route). */
export type HealthStatus = ServingStatus | 'UNREACHABLE';

/**
 * One grpc.health.v1 Check. `target` is an address (a short-lived client is made and closed, over
 * `transport`) or an existing Health client (the gateway's, polling). A service the server does not
 * know is SERVICE_UNKNOWN. Never throws.
 */
export async function checkHealth(
  target: string | HealthClient,
  service = '',
  timeoutMs = 1_000,
  transport: ClientTransport = plaintextTransport,
): Promise<HealthStatus> {
  const client = typeof target === 'string' ? healthClient(target, transport) : target;
  try {
    return await new Promise<HealthStatus>((resolve) => {
      client.Check(
        { service },
        { deadline: Date.now() + timeoutMs },
        (error: ServiceError | null, response) => {
          if (error) resolve(error.code === GrpcStatus.NOT_FOUND ? 'SERVICE_UNKNOWN' : 'UNREACHABLE');
          else resolve(response?.status ?? 'UNKNOWN');
        },
      );
    });
  } finally {
    if (typeof target === 'string') client.close();
  }
}

export interface WaitOptions {
  service?: string;
  /** Give up after this long (default 60 s: models may take a while to load). */
  timeoutMs?: number;
  intervalMs?: number;
  signal?: AbortSignal;
  /** TLS for a worker that serves it; default plaintext. */
  transport?: ClientTransport;
}

/** Polls until SERVING; resolves with the last status seen, which is SERVING unless time ran out. */
export async function waitForServing(address: string, options: WaitOptions = {}): Promise<HealthStatus> {
  const { service = '', timeoutMs = 60_000, intervalMs = 200, signal } = options;
  const client = healthClient(address, options.transport ?? plaintextTransport);
  const until = Date.now() + timeoutMs;
  try {
    for (;;) {
      const left = until - Date.now();
      const status = await checkHealth(client, service, Math.max(1, Math.min(1_000, left)));
      if (status === 'SERVING' || Date.now() + intervalMs >= until || signal?.aborted) return status;
      await sleep(intervalMs, undefined, { signal });
    }
  } finally {
    client.close();
  }
}

function healthClient(address: string, transport: ClientTransport): HealthClient {
  return new Health(address, transport.credentials, transport.channelOptions);
}
