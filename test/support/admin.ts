import type { GatewayProcess } from './gateway.js';

export interface CreatedKey {
  id: string;
  key: string;
  tier: string;
}

/** Calls the admin API of a running gateway with its admin token. */
export async function admin(
  gateway: GatewayProcess,
  method: string,
  path: string,
  body?: unknown,
): Promise<Response> {
  return fetch(`${gateway.url}/admin/api${path}`, {
    method,
    headers: {
      authorization: `Bearer ${gateway.adminToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

export async function createKey(
  gateway: GatewayProcess,
  input: {
    name?: string;
    tier?: string;
    ip_allowlist?: string[];
    rate_limit_per_minute?: number | null;
  } = {},
): Promise<CreatedKey> {
  const res = await admin(gateway, 'POST', '/keys', { name: 'test', tier: 'basic', ...input });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${await res.text()}`);
  return (await res.json()) as CreatedKey;
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}
