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
 * Connection age, servers. A client keeps one connection per replica for as long as it works, so a
 * replica added by a scale-up gets nothing from clients that balance by connection (grpc-js's
 * round_robin, a mesh proxy). After ~5 min (grpc-js adds up to 10 % jitter) the server sends GOAWAY:
 * new calls go on a new connection, after the client has resolved the name again, while calls
 * already open keep running for the grace period: 10 min, the longest call deadline the gateway
 * gives (whisper and diffusion), so no stream is cut by it.
 */
export const serverConnectionAge = {
  'grpc.max_connection_age_ms': 300_000,
  'grpc.max_connection_age_grace_ms': 600_000,
} as const satisfies ChannelOptions;

/**
 * Retries for UNAVAILABLE only, before any answer: the request never reached a handler (connection
 * refused, GOAWAY while draining). A handler sends its headers as soon as it takes a call
 * (handlers.ts), and grpc-js retries nothing after headers, so work that may have run is never
 * repeated here; a worker's refusals (no_capacity, model_loading) are retried by ReplicaPool, on
 * another replica where there is one. `name: [{}]` applies the policy to every method.
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
