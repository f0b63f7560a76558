import { randomBytes, randomInt } from 'node:crypto';

/**
 * API key format: `sb_<key id>_<secret>`.
 * - key id: 12 chars of lowercase base32 (a-z, 2-7): url-safe, no `_`, usable as a NATS KV key,
 *   60 random bits — enough that ids never collide in practice (create() still checks).
 * - secret: 24 random bytes (192 bits) in base62, always 33 chars (62^33 > 2^192), no `_`, so the
 *   key splits unambiguously and survives copy/paste and URLs.
 */
const PREFIX = 'sb';
const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const ID_LENGTH = 12;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_BYTES = 24;
const SECRET_LENGTH = 33;

const KEY_PATTERN = new RegExp(`^${PREFIX}_([a-z2-7]{${ID_LENGTH}})_([0-9A-Za-z]{${SECRET_LENGTH}})$`);
const ID_PATTERN = new RegExp(`^[a-z2-7]{${ID_LENGTH}}$`);

export interface ParsedApiKey {
  id: string;
  secret: string;
}

export function newKeyId(): string {
  let id = '';
  for (let i = 0; i < ID_LENGTH; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return id;
}

export function isKeyId(value: string): boolean {
  return ID_PATTERN.test(value);
}

export function newSecret(): string {
  let n = BigInt(`0x${randomBytes(SECRET_BYTES).toString('hex')}`);
  let out = '';
  for (let i = 0; i < SECRET_LENGTH; i++) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

export function formatApiKey(id: string, secret: string): string {
  return `${PREFIX}_${id}_${secret}`;
}

/** Strict: anything but exactly the format above (wrong length, stray spaces, extra parts) is null. */
export function parseApiKey(raw: unknown): ParsedApiKey | null {
  if (typeof raw !== 'string') return null;
  const match = KEY_PATTERN.exec(raw);
  if (match === null) return null;
  return { id: match[1]!, secret: match[2]! };
}

/** What the admin list shows to tell keys apart; 4 secret chars reveal ~24 of 192 bits. */
export function keyPrefix(id: string, secret: string): string {
  return `${PREFIX}_${id}_${secret.slice(0, 4)}`;
}
