import { createHash, createHmac } from 'node:crypto';

/**
 * How a key's secret is stored. The hash is keyed with a pepper (KEY_PEPPER) that only the
 * gateways hold and the key store never sees, so write access to the store is not enough to make
 * a secret work: whoever adds a hash must know the pepper. The hash also covers the key id, so a
 * hash copied from one key's record to another's (say, from a key the writer legitimately holds)
 * does not let that secret act as the other key.
 *
 *   hash = HMAC-SHA256(pepper, "switchboard-key-v1" ‖ 0 ‖ key id ‖ 0 ‖ SHA-256(secret))
 *
 * Hashing the secret's SHA-256 digest rather than the secret lets records written before peppering
 * (which stored exactly that digest) be re-hashed without knowing their secrets: see
 * legacy-migration.ts. A 192-bit random secret needs no salt or slow hash.
 */

/** `alg` of a stored secret hashed as above; a stored secret without `alg` is a legacy SHA-256. */
export const PEPPERED_ALG = 'hmac-sha256';

/** Shortest KEY_PEPPER accepted: 32 characters (`openssl rand -hex 32` gives 64). */
export const KEY_PEPPER_MIN_LENGTH = 32;

const DOMAIN = 'switchboard-key-v1';

/** SHA-256 of a secret: the inner digest of the peppered hash, and all that legacy records stored. */
export function secretDigest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/**
 * Computes stored hashes with the gateway's pepper. The pepper is a private field, so neither JSON
 * nor a logger that is handed a hasher by mistake ever shows it.
 */
export class SecretHasher {
  readonly #pepper: Buffer;

  constructor(pepper: string) {
    if (pepper.length < KEY_PEPPER_MIN_LENGTH)
      throw new Error(`the key pepper must be at least ${KEY_PEPPER_MIN_LENGTH} characters`);
    this.#pepper = Buffer.from(pepper, 'utf8');
  }

  /** The stored hash of `secret` as a secret of key `id`. */
  hash(id: string, secret: string): Buffer {
    return this.fromDigest(id, secretDigest(secret));
  }

  /** The stored hash for a secret known only by its SHA-256 digest (a legacy record's `hash`). */
  fromDigest(id: string, digest: Buffer): Buffer {
    return createHmac('sha256', this.#pepper).update(`${DOMAIN}\0${id}\0`, 'utf8').update(digest).digest();
  }
}
