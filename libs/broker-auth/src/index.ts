/**
 * Who may do what on the cluster's brokers.
 *
 * Services:        natsAuthOptions('browser', natsCredentialsFrom(env)) in nats.js's connect();
 *                  natsCredentialEnvFields / redisCredentialEnvFields in their config schemas.
 * Local runner:    natsAuthorization(users, defaultResources) → nats-server's configuration,
 *                  redisAclFile(users, prefixes) → redis-server's --aclfile.
 * Chart and docs:  natsPermissions(role, defaultResources), redisAclRules(role, prefix).
 */
export {
  defaultResources,
  natsRoles,
  redisRoles,
  type ClusterResources,
  type NatsRole,
  type RedisRole,
} from './resources.js';
export { natsPermissions, inboxPrefix, type NatsPermissions } from './nats-permissions.js';
export { natsAuthorization, redisAclFile, redisAclRules, type BrokerUser } from './server-config.js';
export {
  natsCredentialEnvFields,
  redisCredentialEnvFields,
  natsCredentialsFrom,
  redisCredentialsFrom,
  natsAuthOptions,
  redisAuthOptions,
  type BrokerCredentials,
} from './env.js';
