import { isIP } from 'node:net';
import { SwitchboardError } from '@switchboard/errors';
import { parseQuotas, QuotaShapeError, type QuotaOverrides } from '@switchboard/usage';
import { tiers, type Tier } from './tiers.js';

/** Input checks for the admin operations; each failure names the field (the error body's `param`). */

const NAME_MAX = 100;
const ALLOWLIST_MAX = 100;
const RATE_LIMIT_MAX = 1_000_000_000;
export const GRACE_SECONDS_MAX = 86_400;

function invalid(param: string, message: string): SwitchboardError {
  return new SwitchboardError('invalid_request', { param, message });
}

/**
 * Characters a label shown to people must not hold: control characters (C0, DEL, C1, NUL
 * included), which break logs, terminals and CSV exports; lone surrogates, which are not text and
 * fail to encode as UTF-8; and the bidirectional marks, embeddings, overrides and isolates
 * (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069), which make a label display as something
 * other than what it holds ("Trojan Source"). With the `u` flag a lone surrogate is a code point
 * of its own, in category Cs, while a well-formed pair is not.
 */
const unsafeDisplayCharacter = /[\p{Cc}\p{Cs}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

/** Whether `value` is safe to show as a label: none of the characters above. */
export function isSafeDisplayText(value: string): boolean {
  return !unsafeDisplayCharacter.test(value);
}

export const UNSAFE_DISPLAY_TEXT_MESSAGE =
  'must not contain control characters, unpaired surrogates or bidirectional formatting characters';

export function validateName(value: unknown): string {
  if (typeof value !== 'string') throw invalid('name', 'name must be a string.');
  // Checked before trimming: a control character at either end is refused, not silently dropped.
  if (!isSafeDisplayText(value)) throw invalid('name', `name ${UNSAFE_DISPLAY_TEXT_MESSAGE}.`);
  const name = value.trim();
  if (name.length === 0 || name.length > NAME_MAX)
    throw invalid('name', `name must be 1–${NAME_MAX} characters.`);
  return name;
}

export function validateTier(value: unknown): Tier {
  if (!(tiers as readonly unknown[]).includes(value))
    throw invalid('tier', `tier must be one of ${tiers.join(', ')}.`);
  return value as Tier;
}

export function validateRateLimit(value: unknown): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > RATE_LIMIT_MAX) {
    throw invalid('rate_limit_per_minute', 'rate_limit_per_minute must be a positive integer or null.');
  }
  return value;
}

export function validateGraceSeconds(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > GRACE_SECONDS_MAX) {
    throw invalid('grace_seconds', `grace_seconds must be an integer 0–${GRACE_SECONDS_MAX}.`);
  }
  return value;
}

/**
 * `a.b.c.d/n` or `x:y::z/n`, prefix within the family's width; a bare address is taken as a
 * single host (/32 or /128). Returns the normalised CIDR, or null. Zone ids (`%eth0`) are refused:
 * they mean nothing to a remote client address.
 */
export function normalizeCidr(value: string): string | null {
  const slash = value.indexOf('/');
  const address = slash === -1 ? value : value.slice(0, slash);
  const family = address.includes('%') ? 0 : isIP(address);
  if (family === 0) return null;
  const width = family === 4 ? 32 : 128;
  if (slash === -1) return `${address.toLowerCase()}/${width}`;
  const prefixText = value.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  if (prefix > width) return null;
  return `${address.toLowerCase()}/${prefix}`;
}

export function validateAllowlist(value: unknown): string[] {
  if (!Array.isArray(value)) throw invalid('ip_allowlist', 'ip_allowlist must be an array of CIDRs.');
  if (value.length > ALLOWLIST_MAX)
    throw invalid('ip_allowlist', `ip_allowlist may hold at most ${ALLOWLIST_MAX} entries.`);
  const out: string[] = [];
  for (const item of value) {
    const cidr = typeof item === 'string' ? normalizeCidr(item.trim()) : null;
    if (cidr === null)
      throw invalid(
        'ip_allowlist',
        `ip_allowlist entry ${JSON.stringify(item)} is not an IPv4 or IPv6 CIDR.`,
      );
    if (!out.includes(cidr)) out.push(cidr);
  }
  return out;
}

/**
 * A key's quota overrides: meter → {limit, period} or null (removes the tier's quota). The
 * error names the field at fault (`quotas.images.limit`); JSON bodies cannot reach the
 * prototype, and a "__proto__" key is refused as an unknown meter.
 */
function validateQuotas(value: unknown): QuotaOverrides {
  try {
    return parseQuotas(value, 'quotas', true);
  } catch (error) {
    if (error instanceof QuotaShapeError) throw invalid(error.param, error.message);
    throw error;
  }
}

export interface KeyFields {
  name: string;
  tier: Tier;
  ip_allowlist: string[];
  rate_limit_per_minute: number | null;
  quotas: QuotaOverrides;
}

export interface CreateKeyInput {
  name: string;
  tier: Tier;
  ip_allowlist?: string[];
  rate_limit_per_minute?: number | null;
  quotas?: QuotaOverrides;
}

export type KeyPatch = Partial<KeyFields>;

/** Inputs arrive from HTTP bodies, so they are checked as `unknown` whatever the static type says. */
function asObject(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SwitchboardError('invalid_request', { message: 'The body must be a JSON object.' });
  }
  return value as Record<string, unknown>;
}

export function validateCreate(input: CreateKeyInput): KeyFields {
  const raw = asObject(input);
  return {
    name: validateName(raw['name']),
    tier: validateTier(raw['tier']),
    ip_allowlist: raw['ip_allowlist'] === undefined ? [] : validateAllowlist(raw['ip_allowlist']),
    rate_limit_per_minute:
      raw['rate_limit_per_minute'] === undefined ? null : validateRateLimit(raw['rate_limit_per_minute']),
    quotas: raw['quotas'] === undefined ? {} : validateQuotas(raw['quotas']),
  };
}

/** Only the fields present are checked and returned; unknown fields are ignored, as everywhere in the API. */
export function validatePatch(patch: KeyPatch): KeyPatch {
  const raw = asObject(patch);
  const out: KeyPatch = {};
  if (raw['name'] !== undefined) out.name = validateName(raw['name']);
  if (raw['tier'] !== undefined) out.tier = validateTier(raw['tier']);
  if (raw['ip_allowlist'] !== undefined) out.ip_allowlist = validateAllowlist(raw['ip_allowlist']);
  if (raw['rate_limit_per_minute'] !== undefined)
    out.rate_limit_per_minute = validateRateLimit(raw['rate_limit_per_minute']);
  // Replaces the key's whole quotas object, as ip_allowlist is replaced whole.
  if (raw['quotas'] !== undefined) out.quotas = validateQuotas(raw['quotas']);
  return out;
}
