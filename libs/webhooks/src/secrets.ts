import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Bumped if the sealing scheme ever changes, so old rows stay readable. */
const FORMAT_VERSION = 1;
const HKDF_INFO = 'switchboard webhook secrets v1';

/** A new signing secret as Standard Webhooks writes them: `whsec_` and 24 random bytes in base64. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/** The bytes an HMAC is keyed with: the base64 after `whsec_` (the official libraries do the same). */
export function secretBytes(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, 'base64');
}

/**
 * Seals signing secrets at rest with AES-256-GCM. The key is derived (HKDF-SHA256) from the
 * configured key material, so any long enough passphrase is a full-strength key, and a database
 * dump alone reveals no secret. Sealed form: version byte, nonce, tag, ciphertext.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(keyMaterial: string) {
    if (keyMaterial.length < 32) throw new Error('the webhook secrets key must be at least 32 characters');
    this.key = Buffer.from(hkdfSync('sha256', keyMaterial, Buffer.alloc(0), HKDF_INFO, 32));
  }

  seal(secret: string): Buffer {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([FORMAT_VERSION]), nonce, cipher.getAuthTag(), ciphertext]);
  }

  open(sealed: Buffer): string {
    if (sealed.length < 1 + NONCE_BYTES + TAG_BYTES || sealed[0] !== FORMAT_VERSION) {
      throw new Error('not a sealed webhook secret');
    }
    const nonce = sealed.subarray(1, 1 + NONCE_BYTES);
    const tag = sealed.subarray(1 + NONCE_BYTES, 1 + NONCE_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, nonce);
    decipher.setAuthTag(tag);
    return Buffer.concat([
      decipher.update(sealed.subarray(1 + NONCE_BYTES + TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  }
}
