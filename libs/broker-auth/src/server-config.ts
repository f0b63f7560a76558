import { createHash } from 'node:crypto';
import { natsPermissions } from './nats-permissions.js';
import { type ClusterResources, type NatsRole, type RedisRole } from './resources.js';

/** One user of a broker: a service's (with that service's permissions) or the operator's (all). */
export interface BrokerUser<Role extends string> {
  readonly role: Role | 'operator';
  readonly user: string;
  readonly password: string;
}

/**
 * nats-server's `authorization` block (its configuration format reads JSON): one user per
 * service with that service's permissions, and the operator's, allowed everything, for tools and
 * tests. With it in force, a client without credentials is refused.
 */
export function natsAuthorization(
  users: readonly BrokerUser<NatsRole>[],
  resources: ClusterResources,
): { authorization: { users: object[] } } {
  return {
    authorization: {
      users: users.map(({ role, user, password }) =>
        role === 'operator'
          ? { user, password }
          : { user, password, permissions: natsPermissions(role, resources) },
      ),
    },
  };
}

/**
 * The Redis ACL rules of a service, after `user <name> on #<sha256 of the password>`: the gateway
 * keeps only rate-limit and authentication-failure counters, all under its prefix, and needs
 * reads, writes and scripts on them (rate-limiter-flexible runs Lua) — no administration, no
 * other keys, no pub/sub.
 */
export function redisAclRules(role: RedisRole, keyPrefix: string): string[] {
  switch (role) {
    case 'gateway':
      return [
        'resetkeys',
        `~${keyPrefix}*`,
        'resetchannels',
        '-@all',
        '+@read',
        '+@write',
        '+@scripting',
        '+@transaction',
        '+@connection',
        '-@dangerous',
        // ioredis's ready check.
        '+info',
        // Call-place leases are timed by Redis's clock, so replicas' clocks need not agree.
        '+time',
      ];
  }
}

/**
 * A Redis ACL file: the default (password-less) user off, one user per service and the
 * operator's. Passwords are stored as SHA-256 digests, never in the clear.
 */
export function redisAclFile(
  users: readonly BrokerUser<RedisRole>[],
  keyPrefixes: Record<RedisRole, string>,
): string {
  const digest = (password: string) => createHash('sha256').update(password).digest('hex');
  const lines = ['user default off resetkeys resetchannels -@all'];
  for (const { role, user, password } of users) {
    const rules = role === 'operator' ? ['~*', '&*', '+@all'] : redisAclRules(role, keyPrefixes[role]);
    lines.push(['user', user, 'on', `#${digest(password)}`, ...rules].join(' '));
  }
  return `${lines.join('\n')}\n`;
}
