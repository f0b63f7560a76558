import { z } from 'zod';
import { inboxPrefix } from './nats-permissions.js';
import type { NatsRole } from './resources.js';

/**
 * The credentials a service presents to NATS, read by every service that connects (gateway,
 * browser, animation). Unset = connect without credentials, which a server with authorization
 * (the local runner's, the chart's) refuses.
 */
export const natsCredentialEnvFields = {
  NATS_USER: z
    .string()
    .optional()
    .describe(
      "This service's NATS user; its permissions are the server's (docs/security.md, Trust boundaries).",
    ),
  NATS_PASSWORD: z
    .string()
    .optional()
    .describe('Password of NATS_USER; in Kubernetes a mounted Secret file (`NATS_PASSWORD_FILE`).'),
};

export const redisCredentialEnvFields = {
  REDIS_USER: z.string().optional().describe("This service's Redis ACL user."),
  REDIS_PASSWORD: z
    .string()
    .optional()
    .describe('Password of REDIS_USER; in Kubernetes a mounted Secret file (`REDIS_PASSWORD_FILE`).'),
};

export interface BrokerCredentials {
  readonly user?: string;
  readonly password?: string;
}

export const natsCredentialsFrom = (e: {
  NATS_USER?: string;
  NATS_PASSWORD?: string;
}): BrokerCredentials => ({
  user: e.NATS_USER,
  password: e.NATS_PASSWORD,
});

export const redisCredentialsFrom = (e: {
  REDIS_USER?: string;
  REDIS_PASSWORD?: string;
}): BrokerCredentials => ({
  user: e.REDIS_USER,
  password: e.REDIS_PASSWORD,
});

/**
 * The part of nats.js's connect options that says who a service is: its user and password, and
 * the inbox prefix its permissions let it (and only it) subscribe to.
 */
export function natsAuthOptions(
  role: NatsRole,
  credentials: BrokerCredentials,
): { user?: string; pass?: string; inboxPrefix: string } {
  return {
    ...(credentials.user !== undefined ? { user: credentials.user } : {}),
    ...(credentials.password !== undefined ? { pass: credentials.password } : {}),
    inboxPrefix: inboxPrefix(role),
  };
}

/** ioredis's options for the same. */
export function redisAuthOptions(credentials: BrokerCredentials): { username?: string; password?: string } {
  return {
    ...(credentials.user !== undefined ? { username: credentials.user } : {}),
    ...(credentials.password !== undefined ? { password: credentials.password } : {}),
  };
}
