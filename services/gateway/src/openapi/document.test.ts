import assert from 'node:assert/strict';
import { test } from 'node:test';
import { documentedErrorCodes, openApiDocument } from './document.js';

/** API.md §1, the error table, copied by hand. */
const apiMdCodesByStatus: Record<string, string[]> = {
  400: [
    'invalid_request',
    'invalid_json',
    'invalid_audio',
    'element_not_found',
    'url_not_allowed',
    'unknown_model',
  ],
  401: ['unauthorized'],
  403: ['ip_not_allowed', 'tier_required'],
  404: ['not_found', 'session_not_found', 'job_not_found'],
  409: ['job_finished'],
  410: ['session_closed', 'session_expired'],
  413: ['payload_too_large'],
  415: ['unsupported_media_type'],
  422: ['idempotency_key_reused'],
  429: ['rate_limited', 'session_limit', 'job_limit'],
  500: ['internal'],
  502: ['navigation_failed', 'upstream_failed'],
  503: ['model_loading', 'unavailable', 'no_capacity'],
  504: ['upstream_timeout'],
};

/** Every call of API.md §2–§8 served by the gateway, with its methods. */
const apiMdPaths: Record<string, string[]> = {
  '/query': ['post'],
  '/models': ['get'],
  '/transcribe': ['post'],
  '/generate-image': ['post'],
  '/api/images/{id}.png': ['get'],
  '/animate': ['post'],
  '/animate/{job_id}': ['get', 'delete'],
  '/api/videos/{job_id}.mp4': ['get'],
  '/api/browser/session/create': ['post'],
  '/api/browser/session/{id}/navigate': ['post'],
  '/api/browser/session/{id}/input': ['post'],
  '/api/browser/session/{id}/submit': ['post'],
  '/api/browser/session/{id}/capture': ['post'],
  '/api/browser/session/{id}/details': ['get'],
  '/api/browser/session/{id}/close': ['post'],
  '/api/browser/session/{id}/devtools': ['get'],
  '/api/browser/screenshots/{session_id}/{filename}': ['get'],
  '/admin/api/keys': ['get', 'post'],
  '/admin/api/keys/{id}': ['patch', 'delete'],
  '/admin/api/keys/{id}/rotate': ['post'],
  '/admin': ['get'],
  '/healthz': ['get'],
  '/readyz': ['get'],
  '/openapi.json': ['get'],
  '/docs': ['get'],
};

const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
type Json = { [key: string]: unknown };
const doc = openApiDocument as unknown as Json;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function resolvePointer(ref: string): unknown {
  assert.ok(ref.startsWith('#/'), `only local refs are used: ${ref}`);
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(node) || !Object.hasOwn(node, part)) return undefined;
    node = node[part];
  }
  return node;
}

function deref(value: unknown): Json {
  const resolved = isObject(value) && typeof value.$ref === 'string' ? resolvePointer(value.$ref) : value;
  assert.ok(isObject(resolved));
  return resolved;
}

function* walk(node: unknown, path: string): Generator<[string, Json]> {
  if (Array.isArray(node)) {
    for (const [i, child] of node.entries()) yield* walk(child, `${path}/${i}`);
  } else if (isObject(node)) {
    yield [path, node];
    for (const [key, child] of Object.entries(node)) yield* walk(child, `${path}/${key}`);
  }
}

function* operations(): Generator<[string, string, Json]> {
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, operation] of Object.entries(item as Json)) {
      if (methods.includes(method)) yield [path, method, operation as Json];
    }
  }
}

test('the document is OpenAPI 3.1.0 and plain JSON', () => {
  assert.equal(openApiDocument.openapi, '3.1.0');
  assert.deepEqual(JSON.parse(JSON.stringify(openApiDocument)), openApiDocument);
});

test('every call of API.md is there with exactly its methods', () => {
  const paths = doc.paths as Json;
  for (const [path, expected] of Object.entries(apiMdPaths)) {
    assert.ok(isObject(paths[path]), `missing path ${path}`);
    const present = Object.keys(paths[path]).filter((key) => methods.includes(key));
    assert.deepEqual(present.sort(), [...expected].sort(), `methods of ${path}`);
  }
});

test('every $ref resolves to an existing component', () => {
  let count = 0;
  for (const [where, node] of walk(doc, '#')) {
    if (typeof node.$ref !== 'string') continue;
    count++;
    assert.match(
      node.$ref,
      /^#\/components\/(schemas|headers|parameters|responses|securitySchemes)\/[^/]+$/,
      where,
    );
    assert.ok(resolvePointer(node.$ref) !== undefined, `${where}: ${node.$ref} does not resolve`);
  }
  assert.ok(count > 50, 'shared pieces are referenced, not copied');
});

test('the error code enum is exactly the codes of API.md §1', () => {
  const expected = Object.values(apiMdCodesByStatus).flat();
  const schemas = (doc.components as Json).schemas as Json;
  const codeEnum = (schemas.ErrorCode as Json).enum as string[];
  assert.deepEqual([...codeEnum].sort(), [...expected].sort());
  assert.equal(new Set(codeEnum).size, codeEnum.length, 'no duplicates');
  assert.deepEqual([...documentedErrorCodes].sort(), [...expected].sort());
});

test('each error response lists only codes of its own status, and refers to the Error schema', () => {
  for (const [path, method, operation] of operations()) {
    for (const [status, response] of Object.entries(operation.responses as Json)) {
      const codes = (response as Json)['x-error-codes'];
      // /readyz answers 503 with its readiness report (probes read the status, people the checks).
      if (Number(status) < 400 || (path === '/readyz' && status === '503')) {
        assert.equal(codes, undefined);
        continue;
      }
      assert.ok(Array.isArray(codes) && codes.length > 0, `${method} ${path} ${status} names its codes`);
      for (const code of codes)
        assert.ok(
          apiMdCodesByStatus[status]?.includes(code as string),
          `${method} ${path}: ${String(code)} is not a ${status}`,
        );
      const content = (response as Json).content as Json;
      assert.deepEqual((content['application/json'] as Json).schema, { $ref: '#/components/schemas/Error' });
    }
  }
});

test('operations have unique ids, a tag, a success response and their path parameters', () => {
  const ids = new Set<string>();
  const tagNames = new Set((doc.tags as Json[]).map((tag) => tag.name));
  for (const [path, method, operation] of operations()) {
    const where = `${method} ${path}`;
    assert.equal(typeof operation.operationId, 'string', where);
    assert.ok(
      !ids.has(operation.operationId as string),
      `duplicate operationId ${String(operation.operationId)}`,
    );
    ids.add(operation.operationId as string);
    assert.ok(
      (operation.tags as string[]).every((tag) => tagNames.has(tag)),
      where,
    );
    assert.ok(
      Object.keys(operation.responses as Json).some((status) => /^(1|2)\d\d$/.test(status)),
      where,
    );
    const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    const declared = ((operation.parameters ?? []) as unknown[]).map(deref).filter((p) => p.in === 'path');
    assert.deepEqual(declared.map((p) => p.name).sort(), templated.sort(), `${where} path parameters`);
    assert.ok(
      declared.every((p) => p.required === true),
      `${where} path parameters are required`,
    );
  }
});

test('security: public pages and probes need nothing, /admin/api the admin token, the rest an API key', () => {
  assert.deepEqual(openApiDocument.security, [{ apiKey: [] }]);
  const schemes = (doc.components as Json).securitySchemes as Json;
  assert.deepEqual(
    { type: (schemes.apiKey as Json).type, scheme: (schemes.apiKey as Json).scheme },
    { type: 'http', scheme: 'bearer' },
  );
  assert.equal((schemes.adminToken as Json).scheme, 'bearer');
  const publicPaths = ['/healthz', '/readyz', '/openapi.json', '/docs', '/admin'];
  for (const [path, method, operation] of operations()) {
    if (publicPaths.includes(path)) assert.deepEqual(operation.security, [], `${method} ${path}`);
    else if (path.startsWith('/admin/'))
      assert.deepEqual(operation.security, [{ adminToken: [] }], `${method} ${path}`);
    else assert.equal(operation.security, undefined, `${method} ${path} uses the default (API key)`);
  }
});

test('authenticated responses document the rate-limit and request-id headers', () => {
  for (const [path, method, operation] of operations()) {
    for (const [status, response] of Object.entries(operation.responses as Json)) {
      const headers = Object.keys((response as Json).headers ?? {});
      if (status !== '101') assert.ok(headers.includes('X-Request-Id'), `${method} ${path} ${status}`);
      if (operation.security === undefined && /^2/.test(status)) {
        assert.ok(
          headers.includes('RateLimit-Policy') && headers.includes('RateLimit'),
          `${method} ${path} ${status}`,
        );
      }
      const codes = ((response as Json)['x-error-codes'] ?? []) as string[];
      if (codes.some((code) => ['rate_limited', 'model_loading', 'no_capacity'].includes(code))) {
        assert.ok(headers.includes('Retry-After'), `${method} ${path} ${status} has Retry-After`);
      }
    }
  }
});

function bodySchema(path: string, method: string, mediaType = 'application/json'): Json {
  const operation = (doc.paths as Record<string, Json>)[path]?.[method] as Json;
  const content = (operation.requestBody as Json).content as Json;
  return deref((content[mediaType] as Json).schema);
}

test('request bodies carry the types, ranges and defaults of API.md', () => {
  const query = bodySchema('/query', 'post');
  assert.deepEqual(query.required, ['prompt']);
  const q = query.properties as Record<string, Json>;
  assert.deepEqual([q.max_tokens?.minimum, q.max_tokens?.default], [1, 2048]);
  assert.deepEqual([q.temperature?.minimum, q.temperature?.maximum, q.temperature?.default], [0, 2, 0.7]);
  assert.deepEqual([q.top_p?.exclusiveMinimum, q.top_p?.maximum], [0, 1]);
  assert.equal(q.stream?.default, false);

  const image = bodySchema('/generate-image', 'post').properties as Record<string, Json>;
  assert.deepEqual(
    [image.width?.minimum, image.width?.maximum, image.width?.multipleOf, image.width?.default],
    [64, 2048, 8, 1024],
  );
  assert.deepEqual([image.steps?.minimum, image.steps?.maximum, image.steps?.default], [1, 100, 20]);
  assert.deepEqual([image.guidance_scale?.minimum, image.guidance_scale?.maximum], [0, 30]);

  const transcribe = bodySchema('/transcribe', 'post', 'multipart/form-data');
  assert.deepEqual(transcribe.required, ['file']);
  assert.deepEqual((transcribe.properties as Record<string, Json>).format?.enum, [
    'text',
    'srt',
    'vtt',
    'json',
  ]);

  const animate = bodySchema('/animate', 'post');
  assert.deepEqual(animate.required, ['backend', 'image']);
  const a = animate.properties as Record<string, Json>;
  assert.deepEqual([a.fps?.minimum, a.fps?.maximum, a.fps?.default], [1, 60, 24]);
  assert.deepEqual([a.duration_s?.minimum, a.duration_s?.maximum, a.duration_s?.default], [0.5, 60, 4]);

  const session = bodySchema('/api/browser/session/create', 'post').properties as Record<string, Json>;
  assert.deepEqual(
    [session.viewport_width?.minimum, session.viewport_width?.maximum, session.viewport_width?.default],
    [100, 3840, 1280],
  );
  assert.equal(session.viewport_height?.default, 720);

  const rotate = bodySchema('/admin/api/keys/{id}/rotate', 'post').properties as Record<string, Json>;
  assert.deepEqual(
    [rotate.grace_seconds?.minimum, rotate.grace_seconds?.maximum, rotate.grace_seconds?.default],
    [0, 86400, 0],
  );
  assert.deepEqual(bodySchema('/admin/api/keys', 'post').required, ['name', 'tier']);
});

test('documented success statuses and media types', () => {
  const responses = (path: string, method: string) =>
    ((doc.paths as Record<string, Json>)[path]?.[method] as Json).responses as Json;
  assert.deepEqual(Object.keys((responses('/query', 'post')[200] as Json).content as Json).sort(), [
    'application/json',
    'text/event-stream',
  ]);
  assert.deepEqual(Object.keys((responses('/transcribe', 'post')[200] as Json).content as Json).sort(), [
    'application/json',
    'application/x-subrip',
    'text/plain; charset=utf-8',
    'text/vtt',
  ]);
  assert.ok('Content-Language' in ((responses('/transcribe', 'post')[200] as Json).headers as Json));
  assert.ok(responses('/animate', 'post')[202]);
  assert.ok(responses('/api/browser/session/create', 'post')[201]);
  assert.ok(responses('/api/browser/session/{id}/devtools', 'get')[101]);
  assert.ok(responses('/admin/api/keys', 'post')[201]);
  assert.ok(responses('/admin/api/keys/{id}', 'delete')[204]);
  assert.ok(responses('/api/images/{id}.png', 'get')[200]);
  const animate = (doc.paths as Record<string, Json>)['/animate']?.post as Json;
  assert.ok((animate.parameters as Json[]).some((p) => p.name === 'Idempotency-Key' && p.in === 'header'));
  assert.ok(
    '403' in (animate.responses as Json) && ((animate.responses as Json)[403] as Json)['x-error-codes'],
  );
});
