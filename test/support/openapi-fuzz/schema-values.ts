import fc from 'fast-check';

// Values drawn from the JSON Schemas of an OpenAPI 3.1 document: ones the schema accepts (at
// and between its bounds), and hostile ones it should reject or carry safely (wrong types, out of
// range, huge and oddly encoded strings).

export type Schema = Record<string, unknown>;

/** Fields whose size drives a model's work: valid draws stay near their minimum, so a run's cost is bounded. */
const costly: Record<string, number> = {
  width: 128,
  height: 128,
  steps: 2,
  max_tokens: 8,
  max_completion_tokens: 8,
  num_frames: 4,
  frames: 4,
  fps: 8,
  duration: 2,
  seconds: 2,
  n: 1,
};

/** Strings no well-behaved client sends, each a classic cause of a crash or a log injection. */
export const oddStrings: readonly string[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\u202eevil\u202c',
  'مرحبا بالعالم',
  '👩‍👩‍👧‍👦🏳️‍🌈',
  'e\u0301\u0301\u0301',
  '\r\nX-Injected: 1',
  '../../../../etc/passwd',
  '%00%ff%',
  '{"$gt":""}',
  "' OR 1=1 --",
  '<script>alert(1)</script>',
  'NaN',
  '-0',
  '1e309',
  '__proto__',
  'constructor',
];

export class SchemaValues {
  constructor(private readonly components: Record<string, Schema>) {}

  /** The schema with its `$ref` followed (refs only into components.schemas). */
  resolve(schema: Schema | undefined): Schema {
    let current = schema ?? {};
    for (let depth = 0; typeof current.$ref === 'string' && depth < 20; depth++) {
      const name = current.$ref.replace('#/components/schemas/', '');
      current = { ...this.components[name], ...omit(current, '$ref') };
    }
    return current;
  }

  /** Values the schema accepts; `field` names the property, for the cost caps. */
  valid(raw: Schema | undefined, field = '', depth = 0): fc.Arbitrary<unknown> {
    const schema = this.resolve(raw);
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    const alternatives = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
    if (alternatives?.length) return fc.oneof(...alternatives.map((s) => this.valid(s, field, depth + 1)));
    if (Array.isArray(schema.allOf))
      return this.valid(
        (schema.allOf as Schema[]).reduce<Schema>((all, part) => merge(all, this.resolve(part)), {}),
        field,
        depth,
      );
    const types = Array.isArray(schema.type)
      ? (schema.type as string[])
      : [schema.type as string | undefined];
    return fc.oneof(...types.map((type) => this.validOfType(schema, type, field, depth)));
  }

  private validOfType(
    schema: Schema,
    type: string | undefined,
    field: string,
    depth: number,
  ): fc.Arbitrary<unknown> {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
      case 'number':
        return this.number(schema, type, field);
      case 'string':
        return this.string(schema);
      case 'array': {
        const minLength = num(schema.minItems) ?? 0;
        const maxLength = Math.min(num(schema.maxItems) ?? 3, minLength + 3);
        if (depth > 4) return fc.constant([]);
        return fc.array(this.valid(schema.items as Schema, field, depth + 1), { minLength, maxLength });
      }
      case 'object':
      case undefined: {
        const properties = (schema.properties ?? {}) as Record<string, Schema>;
        if (depth > 4 || (type === undefined && !schema.properties)) return fc.constant(type ? {} : 'x');
        const required = new Set((schema.required ?? []) as string[]);
        const entries = Object.fromEntries(
          Object.entries(properties).map(([name, s]) => [name, this.valid(s, name, depth + 1)]),
        );
        return fc.record(entries, { requiredKeys: [...required].filter((k) => k in entries) });
      }
      default:
        return fc.constant(null);
    }
  }

  private number(schema: Schema, type: string, field: string): fc.Arbitrary<number> {
    const exclusiveMin = num(schema.exclusiveMinimum);
    const exclusiveMax = num(schema.exclusiveMaximum);
    let min =
      num(schema.minimum) ??
      (exclusiveMin !== undefined ? exclusiveMin + (type === 'integer' ? 1 : 1e-6) : 0);
    let max =
      num(schema.maximum) ??
      (exclusiveMax !== undefined ? exclusiveMax - (type === 'integer' ? 1 : 1e-6) : min + 1000);
    if (field in costly) max = Math.min(max, Math.max(min, costly[field]!));
    const step = num(schema.multipleOf);
    if (step) {
      min = Math.ceil(min / step) * step;
      max = Math.max(min, Math.floor(max / step) * step);
      return fc.integer({ min: min / step, max: max / step }).map((k) => k * step);
    }
    if (type === 'integer') {
      const lo = Math.ceil(min);
      const hi = Math.min(Math.floor(max), Number.MAX_SAFE_INTEGER);
      return fc.oneof(fc.constantFrom(lo, hi), fc.integer({ min: lo, max: hi }));
    }
    return fc.oneof(fc.constantFrom(min, max), fc.double({ min, max, noNaN: true, noDefaultInfinity: true }));
  }

  private string(schema: Schema): fc.Arbitrary<string> {
    const minLength = num(schema.minLength) ?? 0;
    const maxLength = Math.min(num(schema.maxLength) ?? 40, minLength + 40);
    switch (schema.format) {
      case 'uri':
      case 'url':
        return fc.constantFrom('https://example.com/', 'http://127.0.0.1:9/x');
      case 'date-time':
        return fc
          .date({ min: new Date(2020, 0, 1), max: new Date(2030, 0, 1), noInvalidDate: true })
          .map((d) => d.toISOString());
      case 'date':
        return fc.constantFrom('2026-01-01', '2024-02-29');
      case 'email':
        return fc.constant('a@example.com');
    }
    if (typeof schema.pattern === 'string') {
      try {
        return fc
          .stringMatching(new RegExp(schema.pattern))
          .filter((s) => s.length >= minLength && s.length <= Math.max(maxLength, minLength + 80));
      } catch {
        // A pattern fast-check cannot invert: plain strings, most of which it rejects.
      }
    }
    return fc.oneof(
      fc.string({ minLength, maxLength }),
      fc.string({ unit: 'grapheme', minLength, maxLength }),
      fc.constant('x'.repeat(Math.max(minLength, 1))),
    );
  }

  /** Values of the wrong type, out of range or hostile for the schema. */
  hostile(raw: Schema | undefined): fc.Arbitrary<unknown> {
    const schema = this.resolve(raw);
    const bounds: unknown[] = [];
    for (const key of ['minimum', 'exclusiveMinimum'] as const)
      if (num(schema[key]) !== undefined) bounds.push(num(schema[key])! - 1);
    for (const key of ['maximum', 'exclusiveMaximum'] as const)
      if (num(schema[key]) !== undefined) bounds.push(num(schema[key])! + 1);
    if (num(schema.maxLength) !== undefined) bounds.push('y'.repeat(num(schema.maxLength)! + 1));
    if (num(schema.minLength)) bounds.push('');
    if (num(schema.maxItems) !== undefined)
      bounds.push(Array.from({ length: num(schema.maxItems)! + 1 }, () => 'z'));
    if (Array.isArray(schema.enum))
      bounds.push(`${String(schema.enum[0])}-not-one`, String(schema.enum[0]).toUpperCase());
    return fc.oneof(
      ...(bounds.length ? [fc.constantFrom(...bounds)] : []),
      fc.constantFrom(...oddStrings),
      fc.constantFrom(null, true, 0, -1, 1.5, 2 ** 53 + 2, -1e308, [], {}, [null], { a: 1 }),
      fc.constant('x'.repeat(200_000)),
      fc.string({ unit: 'binary', maxLength: 30 }),
      fc.object({ maxDepth: 3 }),
    );
  }
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function omit(schema: Schema, key: string): Schema {
  const { [key]: _, ...rest } = schema;
  return rest;
}

function merge(a: Schema, b: Schema): Schema {
  return {
    ...a,
    ...b,
    properties: { ...(a.properties as object), ...(b.properties as object) },
    required: [...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])],
  };
}
