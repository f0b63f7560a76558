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

/**
 * OpenTelemetry's own variables, read by the trace SDK itself (so their names are the standard
 * ones); listed in every process's schema so they are validated and documented with the rest.
 */
const httpUrl = () =>
  z
    .string()
    .refine(
      (value) => /^https?:\/\/[^\s]+$/.test(value) && URL.canParse(value),
      'expected an http or https URL',
    );

export const tracingEnvFields = {
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl()
    .optional()
    .describe(
      'OTLP/HTTP collector base URL (`http://otel-collector:4318`; spans go to `<url>/v1/traces`). Tracing is on when this or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, off (at no cost) otherwise.',
    ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl()
    .optional()
    .describe('Full OTLP/HTTP traces URL, instead of `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`.'),
  OTEL_EXPORTER_OTLP_HEADERS: z
    .string()
    .optional()
    .describe('Headers sent with every export, `key1=value1,key2=value2` (e.g. a collector token).'),
  OTEL_SERVICE_NAME: z
    .string()
    .optional()
    .describe("The traces' service.name (default `switchboard-<service>`)."),
  OTEL_RESOURCE_ATTRIBUTES: z
    .string()
    .optional()
    .describe(
      'Extra resource attributes on every span, `key1=value1,key2=value2` (e.g. `deployment.environment=prod`).',
    ),
  OTEL_BSP_SCHEDULE_DELAY: z.coerce
    .number()
    .int()
    .positive()
    .optional()
    .describe('Milliseconds between span exports (OpenTelemetry default 5000).'),
};
