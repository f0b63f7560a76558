// A key cannot be minted by writing the key store. Whoever can write the `switchboard_keys` bucket
// (here: the NATS operator user, standing in for any client of the broker with write access) used
// to be able to add `{hash: sha256(S)}` to a victim's record and call as the victim with
// `sb_<victim id>_<S>`. Secrets are now hashed with KEY_PEPPER, which only the gateways hold, and
// records from before that are migrated once, only if the store wrote them before a cutoff.
import assert from 'node:assert/strict';
import { createHash, createHmac, randomInt } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { connect, type KV, type NatsConnection } from 'nats';
import { admin, bearer, createKey } from '../support/admin.js';
import { startGateway, type GatewayProcess } from '../support/gateway.js';
import { errorOf, sleep, startStack, type Stack } from '../support/stack.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const randomFrom = (alphabet: string, length: number) =>
  Array.from({ length }, () => alphabet[randomInt(alphabet.length)]).join('');
/** A secret of the API key format (33 base62 characters) that the attacker chose. */
const chosenSecret = () => randomFrom(BASE62, 33);
const sha256 = (text: string) => createHash('sha256').update(text).digest();

interface StoredSecret {
  alg?: string;
  hash: string;
  expires_at: string | null;
}
interface StoredRecord {
  id: string;
  name: string;
  secrets: StoredSecret[];
  [field: string]: unknown;
}

let stack: Stack;
let nc: NatsConnection;
let kv: KV;

before(async () => {
  stack = await startStack();
  nc = await connect(stack.nats.connectOptions('operator'));
  kv = await nc.jetstream().views.kv('switchboard_keys', { history: 1 });
});
after(async () => {
  await nc?.close();
  await stack?.stop();
});

const readRecord = async (id: string) => (await kv.get(id))!.json<StoredRecord>();
const writeRecord = (record: StoredRecord) => kv.put(record.id, JSON.stringify(record));

/** An authenticated call that needs no worker: a stored image that does not exist is 404. */
async function callWith(gateway: GatewayProcess, key: string): Promise<number> {
  const res = await fetch(`${gateway.url}/api/images/img-00000000-0000-4000-8000-000000000000.png`, {
    headers: bearer(key),
  });
  if (res.status === 401) assert.equal((await errorOf(res)).code, 'unauthorized');
  else await res.body?.cancel();
  return res.status;
}

/** Lets `gateway`'s key view take in every write so far (the admin list waits for that). */
async function caughtUp(gateway: GatewayProcess): Promise<void> {
  assert.equal((await admin(gateway, 'GET', '/keys')).status, 200);
}

/** A record as gateways before KEY_PEPPER wrote it: `hash` is the plain SHA-256 of the secret. */
function legacyRecord(secret: string): StoredRecord {
  const id = randomFrom(ID_ALPHABET, 12);
  return {
    id,
    name: 'created before KEY_PEPPER',
    tier: 'enterprise',
    ip_allowlist: [],
    rate_limit_per_minute: null,
    created_at: new Date().toISOString(),
    status: 'active',
    prefix: `sb_${id}_${secret.slice(0, 4)}`,
    secrets: [{ hash: sha256(secret).toString('hex'), expires_at: null }],
  };
}

describe('writing the key store', () => {
  test('secrets added without the pepper are refused; the key the gateway created keeps working', async () => {
    const victim = await createKey(stack.gateway, { tier: 'enterprise' });
    const attacker = await createKey(stack.gateway, { tier: 'basic' });
    assert.equal(await callWith(stack.gateway, victim.key), 404, 'a key the gateway created works');

    const [legacy, marked, wrongPepper] = [chosenSecret(), chosenSecret(), chosenSecret()];
    const guessedPepper = 'a-pepper-the-attacker-guessed-0123456789';
    const record = await readRecord(victim.id);
    const ownSecret = (await readRecord(attacker.id)).secrets[0]!;
    record.secrets.push(
      // The attack as it was: the plain SHA-256 of a secret the writer chose.
      { hash: sha256(legacy).toString('hex'), expires_at: null },
      // The same, claiming to be peppered.
      { alg: 'hmac-sha256', hash: sha256(marked).toString('hex'), expires_at: null },
      // The right construction under a pepper that is not the gateway's.
      {
        alg: 'hmac-sha256',
        hash: createHmac('sha256', guessedPepper)
          .update(`switchboard-key-v1\0${victim.id}\0`)
          .update(sha256(wrongPepper))
          .digest('hex'),
        expires_at: null,
      },
      // A real peppered hash, copied from a key the writer holds.
      ownSecret,
    );
    await writeRecord(record);
    await caughtUp(stack.gateway);

    const asVictim = (secret: string) => `sb_${victim.id}_${secret}`;
    const attackerSecret = attacker.key.split('_')[2]!;
    for (const secret of [legacy, marked, wrongPepper, attackerSecret])
      assert.equal(await callWith(stack.gateway, asVictim(secret)), 401);
    assert.equal(await callWith(stack.gateway, victim.key), 404, 'the real key still works');
    assert.equal(await callWith(stack.gateway, attacker.key), 404);

    const listed = await (await admin(stack.gateway, 'GET', `/keys/${victim.id}`)).text();
    assert.doesNotMatch(listed, /hash|hmac|secrets/, 'no hashes in admin responses');
  });

  test('a whole record written into the store in the legacy form is refused', async () => {
    const secret = chosenSecret();
    const record = legacyRecord(secret);
    await writeRecord(record);
    await caughtUp(stack.gateway);
    assert.equal(await callWith(stack.gateway, `sb_${record.id}_${secret}`), 401);
  });
});

describe('the one-time migration of records from before KEY_PEPPER', () => {
  test('migrates records written before its cutoff, never later ones, and keys rotate and revoke as usual', async () => {
    // The store as the upgrade finds it: a key created by a gateway of the previous version.
    const oldSecret = chosenSecret();
    const old = legacyRecord(oldSecret);
    await writeRecord(old);
    const oldKey = `sb_${old.id}_${oldSecret}`;
    await caughtUp(stack.gateway);
    assert.equal(await callWith(stack.gateway, oldKey), 401, 'refused while not migrated');

    await sleep(50);
    const cutoff = new Date().toISOString();
    await sleep(50);
    // Planted once the upgrade is under way: must never be migrated.
    const plantedSecret = chosenSecret();
    const planted = legacyRecord(plantedSecret);
    await writeRecord(planted);

    const migrating = await startGateway({ ...stack.gatewayEnv, KEYS_MIGRATE_LEGACY_HASHES_BEFORE: cutoff });
    try {
      assert.equal(await callWith(migrating, oldKey), 404, 'the existing key works after the migration');
      assert.equal(await callWith(migrating, `sb_${planted.id}_${plantedSecret}`), 401);
      await caughtUp(stack.gateway);
      assert.equal(await callWith(stack.gateway, oldKey), 404, 'every replica sees the migrated record');

      // After the migration: a legacy entry added to the migrated record is refused, also by a
      // replica that starts later with the setting still in place.
      const lateSecret = chosenSecret();
      const migrated = await readRecord(old.id);
      migrated.secrets.push({ hash: sha256(lateSecret).toString('hex'), expires_at: null });
      await writeRecord(migrated);
      const restarted = await startGateway({
        ...stack.gatewayEnv,
        KEYS_MIGRATE_LEGACY_HASHES_BEFORE: cutoff,
      });
      try {
        for (const gateway of [restarted, migrating, stack.gateway]) {
          await caughtUp(gateway);
          assert.equal(await callWith(gateway, `sb_${old.id}_${lateSecret}`), 401);
          assert.equal(await callWith(gateway, `sb_${planted.id}_${plantedSecret}`), 401);
          assert.equal(await callWith(gateway, oldKey), 404);
        }
      } finally {
        await restarted.stop();
      }

      // A migrated key rotates with a grace and is revoked like any other.
      const rotated = await admin(migrating, 'POST', `/keys/${old.id}/rotate`, { grace_seconds: 60 });
      assert.equal(rotated.status, 200);
      const { key: newKey } = (await rotated.json()) as { key: string };
      assert.equal(await callWith(migrating, newKey), 404);
      assert.equal(await callWith(migrating, oldKey), 404, 'the old secret works during the grace');
      assert.equal((await admin(migrating, 'DELETE', `/keys/${old.id}`)).status, 204);
      assert.equal(await callWith(migrating, newKey), 401);
      assert.equal(await callWith(migrating, oldKey), 401);
    } finally {
      await migrating.stop();
    }
  });

  test('a cutoff in the future is refused at start-up', async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString();
    await assert.rejects(
      startGateway({ ...stack.gatewayEnv, KEYS_MIGRATE_LEGACY_HASHES_BEFORE: future }),
      /KEYS_MIGRATE_LEGACY_HASHES_BEFORE: must not be in the future/,
    );
  });
});
