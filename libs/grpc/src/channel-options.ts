import type { ChannelOptions } from '@grpc/grpc-js';

/**
 * Keepalive, both ends. Clients ping every 30 s so a worker that vanished without closing its
 * socket (a killed pod, a dropped conntrack entry) is noticed within ~40 s rather than at the next
 * TCP timeout. Servers must *permit* pings that often: a C-core or Go server, or a mesh proxy,
 * answers pings more frequent than its policy with GOAWAY "too_many_pings" (default policy: 5 min).
 * grpc-js servers do not police pings, but the permit options are declared anyway, at a lower
 * bound (20 s) than the clients' interval, so a different server or proxy configured alike agrees.
 */
export const clientKeepalive = {
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.keepalive_permit_without_calls': 1,
} as const satisfies ChannelOptions;

export const serverKeepalive = {
  // The server pings idle clients too, so a gateway that died mid-stream frees the worker's
  // generation (its calls are cancelled) instead of holding it until the socket times out.
  'grpc.keepalive_time_ms': 60_000,
  'grpc.keepalive_timeout_ms': 20_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.http2.min_ping_interval_without_data_ms': 20_000,
  'grpc.http2.min_time_between_pings_ms': 20_000,
  'grpc.http2.max_ping_strikes': 2,
} as const satisfies ChannelOptions;

/**
 * Retries for UNAVAILABLE only: the request either never reached a worker (connection refused,
 * GOAWAY while draining) or the worker said it cannot take it now. Every other status is an
 * answer. `name: [{}]` applies the policy to every method of every service on the channel.
 */
export function retryServiceConfig(maxAttempts = 3): string {
  return JSON.stringify({
    methodConfig: [
      {
        name: [{}],
        waitForReady: false,
        retryPolicy: {
          maxAttempts,
          initialBackoff: '0.1s',
          maxBackoff: '0.5s',
          backoffMultiplier: 2,
          retryableStatusCodes: ['UNAVAILABLE'],
        },
      },
    ],
  });
}
