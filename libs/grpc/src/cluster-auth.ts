import { createHash, timingSafeEqual } from 'node:crypto';
import {
  type Interceptor,
  InterceptingCall,
  type ServerInterceptor,
  ServerInterceptingCall,
} from '@grpc/grpc-js';
import { SwitchboardError, toGrpcStatus } from '@switchboard/errors';
import type { Logger } from '@switchboard/telemetry';

/**
 * Gateway → worker authentication. Workers act on the key id a caller presents, so a pod that can
 * merely reach a worker port must not be able to present one: every gRPC call (as metadata) and
 * every DevTools relay upgrade (as an HTTP header) carries the cluster secret, which only
 * gateways and workers get from their Kubernetes Secret (`CLUSTER_SECRET`).
 */
export const CLUSTER_SECRET_KEY = 'x-switchboard-cluster-secret';

/** Shortest secret accepted from the environment: 32 characters, as `openssl rand -hex 16` gives. */
export const CLUSTER_SECRET_MIN_LENGTH = 32;

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** Constant-time comparison over fixed-length digests, so timing tells nothing of the secret. */
export function clusterSecretMatches(presented: unknown, expected: string): boolean {
  if (typeof presented !== 'string' || presented === '' || expected === '') return false;
  return timingSafeEqual(digest(presented), digest(expected));
}

/** Health stays open: kubelet's native gRPC probes call it without metadata, and it acts as no one. */
const HEALTH_PREFIX = '/grpc.health.v1.Health/';
const REFUSED = 'Calls must come from a gateway.';

/**
 * A server interceptor that refuses every call of the registered services whose metadata lacks
 * the cluster secret, with the table's `unauthorized` code, before the handler sees anything.
 * The secret is taken out of the metadata that reaches the handler, so nothing downstream logs it.
 */
export function clusterAuthInterceptor(secret: string, logger: Logger): ServerInterceptor {
  return (method, call) => {
    if (method.path.startsWith(HEALTH_PREFIX)) return new ServerInterceptingCall(call);
    let refused = false;
    const intercepting: ServerInterceptingCall = new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, pass) {
            if (clusterSecretMatches(metadata.get(CLUSTER_SECRET_KEY)[0], secret)) {
              metadata.remove(CLUSTER_SECRET_KEY);
              pass(metadata);
              return;
            }
            refused = true;
            // Whether a value came, never the value: a near miss must not end up in the logs.
            const presented = metadata.get(CLUSTER_SECRET_KEY).length > 0;
            logger.warn(
              { method: method.path, peer: call.getPeer(), presented },
              'grpc call without cluster secret',
            );
            const status = toGrpcStatus(new SwitchboardError('unauthorized', { message: REFUSED }));
            intercepting.sendStatus({ ...status, details: REFUSED });
          },
          onReceiveMessage(message, pass) {
            if (!refused) pass(message);
          },
          onReceiveHalfClose(pass) {
            if (!refused) pass();
          },
        });
      },
    });
    return intercepting;
  };
}

/** A client interceptor that adds the cluster secret to every call's metadata. */
export function clusterSecretInterceptor(secret: string): Interceptor {
  return (callOptions, nextCall) =>
    new InterceptingCall(nextCall(callOptions), {
      start(metadata, listener, next) {
        metadata.set(CLUSTER_SECRET_KEY, secret);
        next(metadata, listener);
      },
    });
}
