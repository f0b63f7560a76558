import { isIP } from 'node:net';
import { z } from 'zod';

/** Reusable environment field parsers; every one takes the raw string from the environment. */

export const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

export const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** A required secret (a token, a shared key) of at least `minLength` characters. */
export const secret = (minLength: number) =>
  z.string().min(minLength, `must be at least ${minLength} characters`);

export const boolean = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    // The default as the variable is written, so the generated docs show it.
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** host:port of a peer service (`<NAME>_ADDR`). */
export const address = (fallback: string) =>
  z
    .string()
    .regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'expected host:port')
    .default(fallback);

export const url = (protocols: string[], fallback: string) =>
  z
    .string()
    .refine(
      (value) => {
        try {
          return protocols.includes(new URL(value).protocol.replace(/:$/, ''));
        } catch {
          return false;
        }
      },
      `expected a ${protocols.join(' or ')} URL`,
    )
    .default(fallback);

/** The pino level; described here once, so every process's table says the same. */
export const logLevel = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  .default('info')
  .describe('Log level (pino): fatal, error, warn, info, debug, trace or silent.');

/** True when `value` is an IPv4 or IPv6 CIDR (or a bare address, meaning a single host). */
export function isCidr(value: string): boolean {
  const [ip, bits, extra] = value.split('/');
  if (extra !== undefined || !ip) return false;
  const family = isIP(ip);
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** Comma-separated CIDR list; empty means an empty list. */
export const cidrList = () =>
  z
    .string()
    .default('')
    .transform((raw) =>
      raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .refine((items) => items.every(isCidr), 'expected comma-separated IPv4/IPv6 CIDRs');

/** Comma-separated plain list. */
export const list = () =>
  z
    .string()
    .default('')
    .transform((raw) =>
      raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );

/** A JSON document in a variable, validated by `inner`. */
export const json = <T extends z.ZodType>(inner: T, fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((raw, ctx) => {
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'expected JSON' });
        return z.NEVER;
      }
    })
    .pipe(inner);
