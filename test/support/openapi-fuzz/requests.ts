import fc from 'fast-check';
import type { FuzzRequest } from './send.js';
import type { SchemaValues } from './schema-values.js';
import { oddStrings, type Schema } from './schema-values.js';

// Requests for one operation of the OpenAPI document: valid ones, and ones with exactly one thing
// wrong (a field, a missing or extra property, the body's type or encoding, a header), so an
// answer that is not what the contract says points at one cause.

export interface Operation {
  method: string;
  /** The path template, e.g. `/webhooks/{id}`. */
  template: string;
  parameters: Parameter[];
  /** Request body media types and their schemas. */
  bodies: Record<string, Schema>;
  bodyRequired: boolean;
  /** Status → response object of the document. */
  responses: Record<string, Record<string, unknown>>;
  admin: boolean;
  anonymous: boolean;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: Schema;
}

export interface Credentials {
  apiKey: string;
  adminToken: string;
}

/** Ids that exist in the stack, by path template and parameter (`/webhooks/{id}` → `id`). */
export type KnownIds = Record<string, Record<string, string[]>>;

const methods = ['get', 'post', 'put', 'patch', 'delete'] as const;

export function operationsOf(document: Record<string, unknown>): Operation[] {
  const components = document.components as { parameters?: Record<string, Parameter> };
  const paths = document.paths as Record<string, Record<string, Record<string, unknown>>>;
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(paths)) {
    for (const method of methods) {
      const op = item[method];
      if (!op) continue;
      const parameters = [
        ...((item.parameters as unknown as unknown[]) ?? []),
        ...((op.parameters as unknown[]) ?? []),
      ].map((p) => {
        const ref = (p as { $ref?: string }).$ref;
        return (ref ? components.parameters?.[ref.split('/').pop()!] : p) as Parameter;
      });
      const body = op.requestBody as
        { required?: boolean; content?: Record<string, { schema: Schema }> } | undefined;
      const security = (op.security ?? document.security ?? []) as Record<string, unknown>[];
      operations.push({
        method: method.toUpperCase(),
        template,
        parameters,
        bodies: Object.fromEntries(Object.entries(body?.content ?? {}).map(([type, c]) => [type, c.schema])),
        bodyRequired: body?.required ?? false,
        responses: op.responses as Operation['responses'],
        admin: security.some((s) => 'adminToken' in s),
        anonymous: security.length === 0 || security.some((s) => Object.keys(s).length === 0),
      });
    }
  }
  return operations;
}

/** Whether the operation upgrades to a WebSocket (those are checked separately, without upgrading). */
export const isUpgrade = (op: Operation) =>
  op.parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'upgrade');

type Variant =
  | 'valid'
  | 'hostile-parameter'
  | 'hostile-field'
  | 'missing-field'
  | 'extra-field'
  | 'body-not-an-object'
  | 'malformed-json'
  | 'wrong-content-type'
  | 'no-authorization'
  | 'wrong-credential'
  | 'duplicated-headers'
  | 'truncated-multipart';

export function requestsFor(
  op: Operation,
  values: SchemaValues,
  credentials: Credentials,
  known: KnownIds,
): fc.Arbitrary<FuzzRequest> {
  const jsonSchema = op.bodies['application/json'];
  const formSchema = op.bodies['multipart/form-data'];
  const variants: Variant[] = [
    'valid',
    'valid',
    'hostile-parameter',
    'no-authorization',
    'wrong-credential',
    'duplicated-headers',
  ];
  if (jsonSchema || formSchema)
    variants.push('hostile-field', 'hostile-field', 'missing-field', 'extra-field', 'wrong-content-type');
  if (jsonSchema) variants.push('body-not-an-object', 'malformed-json');
  if (formSchema) variants.push('truncated-multipart');
  const bodySchema = values.resolve(jsonSchema ?? formSchema);
  const properties = Object.keys(bodySchema.properties ?? {});
  const required = (bodySchema.required ?? []) as string[];

  return fc
    .record({
      variant: fc.constantFrom(...variants),
      params: fc.tuple(...op.parameters.map((p) => parameterValue(op, p, values, known))),
      hostileParam: fc.nat(Math.max(op.parameters.length - 1, 0)),
      hostileValue: fc.constantFrom(...oddStrings, 'x'.repeat(10_000), '-1', '1e999', '%', '%2e%2e'),
      body: values.valid(bodySchema),
      field: fc.constantFrom(...(properties.length ? properties : ['x'])),
      missing: fc.constantFrom(...(required.length ? required : ['x'])),
      hostileField: values.hostile(undefined),
      useForm: fc.boolean(),
      cut: fc.double({ min: 0.05, max: 0.95, noNaN: true }),
      notObject: fc.constantFrom<unknown>([], 'text', 42, null, true, [{}]),
    })
    .chain((drawn) =>
      // The hostile value for a field comes from that field's own schema (its bounds and enum).
      values
        .hostile(((bodySchema.properties ?? {}) as Record<string, Schema>)[drawn.field])
        .map((fieldValue) => ({
          ...drawn,
          hostileField: fieldValue,
        })),
    )
    .map((d) => {
      const headers: Record<string, string | string[]> = {};
      const variant: Variant = d.variant;
      const token = op.admin ? credentials.adminToken : credentials.apiKey;
      if (variant === 'wrong-credential')
        headers.authorization = `Bearer ${op.admin ? credentials.apiKey : 'sb_nope_' + 'a'.repeat(30)}`;
      else if (variant === 'duplicated-headers')
        headers.authorization = [`Bearer ${token}`, `Bearer ${token}`];
      else if (variant !== 'no-authorization') headers.authorization = `Bearer ${token}`;

      let path = op.template;
      const query = new URLSearchParams();
      op.parameters.forEach((p, i) => {
        let value = d.params[i];
        if (variant === 'hostile-parameter' && i === d.hostileParam) value = d.hostileValue;
        // An empty path segment addresses another route (`/session//submit`), not this operation.
        if (p.in === 'path' && !value) value = '-';
        if (value === undefined) return;
        if (p.in === 'path') path = path.replace(`{${p.name}}`, pathSegment(value));
        else if (p.in === 'query') query.append(p.name, value);
        else if (p.in === 'header') headers[p.name.toLowerCase()] = headerSafe(value);
      });
      const search = query.toString();
      const request: FuzzRequest = {
        method: op.method,
        path: search ? `${path}?${search}` : path,
        headers,
        variant,
      };

      if (!jsonSchema && !formSchema) return request;
      let body = (d.body ?? {}) as Record<string, unknown>;
      if (variant === 'hostile-field') body = { ...body, [d.field]: d.hostileField };
      if (variant === 'missing-field')
        body = Object.fromEntries(Object.entries(body).filter(([k]) => k !== d.missing));
      if (variant === 'extra-field') body = { ...body, ['unexpected_' + d.field]: d.hostileField };
      const asForm = formSchema && (!jsonSchema || d.useForm);
      if (variant === 'body-not-an-object')
        return withBody(request, 'application/json', Buffer.from(JSON.stringify(d.notObject)));
      if (variant === 'malformed-json') {
        const text = JSON.stringify(body);
        return withBody(
          request,
          'application/json',
          Buffer.from(text.slice(0, Math.floor(text.length * d.cut)) + '\u0000'),
        );
      }
      if (variant === 'wrong-content-type') {
        const type = asForm
          ? 'application/json'
          : d.useForm
            ? 'text/plain'
            : 'application/x-www-form-urlencoded';
        return withBody(request, type, Buffer.from(asForm ? 'not json' : JSON.stringify(body)));
      }
      if (asForm) {
        const form = multipart(body, values.resolve(formSchema));
        if (variant === 'truncated-multipart')
          form.body = form.body.subarray(0, Math.floor(form.body.length * d.cut));
        return withBody(request, form.type, form.body);
      }
      if (variant === 'duplicated-headers') {
        const withType = withBody(request, 'application/json', Buffer.from(JSON.stringify(body)));
        withType.headers['content-type'] = ['application/json', 'text/plain'];
        return withType;
      }
      return withBody(request, 'application/json', Buffer.from(JSON.stringify(body)));
    });
}

function parameterValue(
  op: Operation,
  p: Parameter,
  values: SchemaValues,
  known: KnownIds,
): fc.Arbitrary<string | undefined> {
  if (p.in === 'header') {
    // Upgrade-style headers are the WebSocket routes' own check; a Range is drawn from the schema.
    return p.required
      ? values.valid(p.schema).map(String)
      : fc.option(values.valid(p.schema).map(String), { nil: undefined });
  }
  const ids = known[op.template]?.[p.name] ?? [];
  const drawn = values.valid(p.schema).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  const value = ids.length
    ? fc.oneof({ arbitrary: fc.constantFrom(...ids), weight: 3 }, { arbitrary: drawn, weight: 1 })
    : drawn;
  return p.required || p.in === 'path' ? value : fc.option(value, { nil: undefined });
}

/** Percent-encoded; a lone surrogate becomes bytes that are not UTF-8, as a broken client would send. */
function pathSegment(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    const wellFormed = value.replace(
      /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
      '\ufffd',
    );
    return encodeURIComponent(wellFormed).replaceAll('%EF%BF%BD', '%ED%A0%80');
  }
}

/** Header values may not hold CR, LF or NUL at all (the client library refuses them). */
const headerSafe = (value: string) => value.replace(/[\r\n\0]/g, '').replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');

function withBody(request: FuzzRequest, type: string, body: Buffer): FuzzRequest {
  return { ...request, headers: { ...request.headers, 'content-type': type }, body };
}

/** A multipart body; the schema's binary fields get a few bytes of not-really-media. */
function multipart(fields: Record<string, unknown>, schema: Schema): { type: string; body: Buffer } {
  // A fixed boundary keeps a seed's requests byte for byte the same.
  const boundary = 'fuzz-boundary-5f1c2e';
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    const binary = properties[name]?.contentMediaType !== undefined || properties[name]?.format === 'binary';
    const head = binary
      ? `Content-Disposition: form-data; name="${name}"; filename="upload.bin"\r\nContent-Type: application/octet-stream`
      : `Content-Disposition: form-data; name="${name}"`;
    const content = typeof value === 'string' ? value : JSON.stringify(value);
    parts.push(Buffer.from(`--${boundary}\r\n${head}\r\n\r\n`), Buffer.from(content), Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { type: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(parts) };
}
