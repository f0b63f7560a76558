import { newEndpointId } from './ids.js';
import { newSecret, type SecretBox } from './secrets.js';
import { ENDPOINT_COLUMNS, endpointView, type EndpointRow, type Queryable } from './rows.js';
import {
  MAX_ENDPOINTS_PER_KEY,
  type EndpointInput,
  type EndpointPatch,
  type WebhookEndpoint,
} from './types.js';

/** Endpoint calls, each run inside the caller's transaction and scoped by key. */

export async function createEndpoint(
  client: Queryable,
  box: SecretBox,
  keyId: string,
  input: EndpointInput,
): Promise<{ endpoint: WebhookEndpoint; secret: string } | 'limit'> {
  // Per key, so two concurrent registrations cannot both see 19 and make 21.
  await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`webhook-endpoints/${keyId}`]);
  const { rows: counted } = await client.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM webhook_endpoints WHERE key_id = $1',
    [keyId],
  );
  if ((counted[0]?.n ?? 0) >= MAX_ENDPOINTS_PER_KEY) return 'limit';
  const { rows } = await client.query<EndpointRow>(
    `INSERT INTO webhook_endpoints (id, key_id, url, events, description)
     VALUES ($1, $2, $3, $4, $5) RETURNING ${ENDPOINT_COLUMNS}`,
    [newEndpointId(), keyId, input.url, input.events, input.description],
  );
  const endpoint = endpointView(rows[0]!);
  const secret = newSecret();
  await client.query('INSERT INTO webhook_secrets (endpoint_id, sealed) VALUES ($1, $2)', [
    endpoint.id,
    box.seal(secret),
  ]);
  return { endpoint, secret };
}

export async function listEndpoints(client: Queryable, keyId: string): Promise<WebhookEndpoint[]> {
  const { rows } = await client.query<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE key_id = $1 ORDER BY id`,
    [keyId],
  );
  return rows.map(endpointView);
}

export async function getEndpoint(
  client: Queryable,
  keyId: string,
  id: string,
): Promise<WebhookEndpoint | null> {
  const { rows } = await client.query<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND key_id = $2`,
    [id, keyId],
  );
  return rows[0] ? endpointView(rows[0]) : null;
}

export async function updateEndpoint(
  client: Queryable,
  keyId: string,
  id: string,
  patch: EndpointPatch,
): Promise<WebhookEndpoint | null> {
  const sets: string[] = ['updated_at = now()'];
  const params: unknown[] = [id, keyId];
  const set = (column: string, value: unknown) => {
    params.push(value);
    sets.push(`${column} = $${params.length}`);
  };
  if (patch.url !== undefined) set('url', patch.url);
  if (patch.events !== undefined) set('events', patch.events);
  if (patch.description !== undefined) set('description', patch.description);
  if (patch.status === 'enabled') {
    // A fresh start: the failure run that disabled it no longer counts towards the 5-day rule.
    sets.push(`status = 'enabled'`, 'disabled_reason = NULL', 'failing_since = NULL');
  } else if (patch.status === 'disabled') {
    // Disabled by its owner, unless already disabled (then the original reason stays).
    sets.push(
      `disabled_reason = CASE WHEN status = 'disabled' THEN disabled_reason ELSE 'owner' END`,
      `status = 'disabled'`,
    );
  }
  const { rows } = await client.query<EndpointRow>(
    `UPDATE webhook_endpoints SET ${sets.join(', ')} WHERE id = $1 AND key_id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
    params,
  );
  return rows[0] ? endpointView(rows[0]) : null;
}

export async function deleteEndpoint(client: Queryable, keyId: string, id: string): Promise<boolean> {
  const { rowCount } = await client.query('DELETE FROM webhook_endpoints WHERE id = $1 AND key_id = $2', [
    id,
    keyId,
  ]);
  return (rowCount ?? 0) > 0;
}

/**
 * A new secret; the active ones keep signing for `graceSeconds` more (never longer than they
 * already would), so receivers can switch without losing a delivery.
 */
export async function rotateSecret(
  client: Queryable,
  box: SecretBox,
  keyId: string,
  id: string,
  graceSeconds: number,
): Promise<{ id: string; secret: string } | null> {
  const { rowCount } = await client.query(
    'SELECT 1 FROM webhook_endpoints WHERE id = $1 AND key_id = $2 FOR UPDATE',
    [id, keyId],
  );
  if (!rowCount) return null;
  await client.query(
    `UPDATE webhook_secrets
     SET expires_at = least(coalesce(expires_at, 'infinity'), now() + make_interval(secs => $2))
     WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > now())`,
    [id, Math.max(0, graceSeconds)],
  );
  await client.query('DELETE FROM webhook_secrets WHERE endpoint_id = $1 AND expires_at <= now()', [id]);
  const secret = newSecret();
  await client.query('INSERT INTO webhook_secrets (endpoint_id, sealed) VALUES ($1, $2)', [
    id,
    box.seal(secret),
  ]);
  return { id, secret };
}

/** Each endpoint's active secrets, opened, newest first. */
export async function activeSecrets(
  client: Queryable,
  box: SecretBox,
  endpointIds: readonly string[],
): Promise<Map<string, string[]>> {
  const { rows } = await client.query<{ endpoint_id: string; sealed: Buffer }>(
    `SELECT endpoint_id, sealed FROM webhook_secrets
     WHERE endpoint_id = ANY($1::text[]) AND (expires_at IS NULL OR expires_at > now())
     ORDER BY id DESC`,
    [endpointIds],
  );
  const secrets = new Map<string, string[]>();
  for (const row of rows) {
    const list = secrets.get(row.endpoint_id) ?? [];
    list.push(box.open(row.sealed));
    secrets.set(row.endpoint_id, list);
  }
  return secrets;
}
