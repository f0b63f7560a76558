import assert from 'node:assert/strict';
import { test } from 'node:test';
import { httpStatusOf, type ErrorCode } from '@switchboard/errors';
import type { JobRecord } from '@switchboard/jobs';
import { adminJobView, jobView } from '../animation/job-view.js';
import { openApiDocument } from './document.js';

// What the route declarations' types do not prove about the generated document.

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

test('every $ref resolves to an existing component', () => {
  let count = 0;
  for (const [where, node] of walk(doc, '#')) {
    if (typeof node.$ref !== 'string') continue;
    count++;
    assert.match(node.$ref, /^#\/components\/(schemas|headers|securitySchemes)\/[^/]+$/, where);
    assert.ok(resolvePointer(node.$ref) !== undefined, `${where}: ${node.$ref} does not resolve`);
  }
  assert.ok(count > 50, 'shared pieces are referenced, not copied');
});

test('each error response lists only codes of its own status, and refers to the Error schema (OpenAiError under /v1)', () => {
  for (const [path, method, operation] of operations()) {
    for (const [status, response] of Object.entries(operation.responses as Json)) {
      const codes = (response as Json)['x-error-codes'];
      // /readyz answers 503 with its readiness report (probes read the status, people the checks).
      if (Number(status) < 400 || (path === '/readyz' && status === '503')) {
        assert.equal(codes, undefined);
        continue;
      }
      // 412 and 416 refuse the request's own headers: `invalid_request` under the status HTTP
      // names for it, so no code of the table's is listed, but the body is the usual error.
      if (status === '412' || status === '416') {
        const schema = path.startsWith('/v1/') ? 'OpenAiError' : 'Error';
        assert.deepEqual(((response as Json).content as Json)['application/json'], {
          schema: { $ref: `#/components/schemas/${schema}` },
        });
        continue;
      }
      assert.ok(Array.isArray(codes) && codes.length > 0, `${method} ${path} ${status} names its codes`);
      for (const code of codes)
        assert.equal(httpStatusOf(code as ErrorCode), Number(status), `${method} ${path}: ${String(code)}`);
      const content = (response as Json).content as Json;
      const schema = path.startsWith('/v1/') ? 'OpenAiError' : 'Error';
      assert.deepEqual((content['application/json'] as Json).schema, {
        $ref: `#/components/schemas/${schema}`,
      });
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
  // A live-view page and its socket need no key either: their token is the credential.
  const publicPaths = [
    '/healthz',
    '/readyz',
    '/openapi.json',
    '/docs',
    '/admin',
    '/live/{token}',
    '/live/{token}/stream',
  ];
  // The pages' own scripts and styles are as public as the pages.
  const isPageAsset = (path: string) => /^\/(admin|docs|live-assets)\/[\w-]+\.(js|css)$/.test(path);
  for (const [path, method, operation] of operations()) {
    if (publicPaths.includes(path) || isPageAsset(path))
      assert.deepEqual(operation.security, [], `${method} ${path}`);
    else if (path.startsWith('/admin/'))
      assert.deepEqual(operation.security, [{ adminToken: [] }], `${method} ${path}`);
    else assert.deepEqual(operation.security, [{ apiKey: [] }], `${method} ${path}`);
  }
});

test('authenticated responses document the rate-limit and request-id headers', () => {
  for (const [path, method, operation] of operations()) {
    for (const [status, response] of Object.entries(operation.responses as Json)) {
      const headers = Object.keys((response as Json).headers ?? {});
      if (status !== '101') assert.ok(headers.includes('X-Request-Id'), `${method} ${path} ${status}`);
      const keyed = JSON.stringify(operation.security) === JSON.stringify([{ apiKey: [] }]);
      if (keyed && /^2/.test(status)) {
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

const schemaOf = (name: string) => ((doc.components as Json).schemas as Record<string, Json>)[name]!;

test('the served document never points readers at a file of the repository', () => {
  assert.doesNotMatch(JSON.stringify(openApiDocument), /API\.md|DESIGN\.md|§/);
});

test('POST /animate takes the same fields as JSON and as a form', () => {
  const content = ((doc.paths as Record<string, Json>)['/animate']?.post as Json).requestBody as Json;
  const [json, form] = ['application/json', 'multipart/form-data'].map((type) =>
    deref(((content.content as Json)[type] as Json).schema),
  );
  assert.deepEqual(
    Object.keys(form!.properties as Json).sort(),
    Object.keys(json!.properties as Json).sort(),
  );
  assert.deepEqual(form!.required, json!.required);
});

// Handlers are typed by their response schemas, which checks every field they write; these
// check the other way, that the views write no field the document leaves out.
test('jobs are documented with exactly the fields the gateway shows', () => {
  const record: JobRecord = {
    job_id: 'job-0193a1b2c3d4-9f8e7d6c5b4a3921',
    owner_key_id: 'k1',
    backend: 'portrait',
    status: 'succeeded',
    progress: 1,
    attempts: 1,
    created_at: '2025-01-01T00:00:00.000Z',
    updated_at: '2025-01-01T00:00:10.000Z',
    started_at: '2025-01-01T00:00:01.000Z',
    finished_at: '2025-01-01T00:00:10.000Z',
    params: { seed: 1, motion_bucket_id: 127, noise_aug_strength: 0.02 },
    inputs: { image: 'images/img-1.png' },
    result: { video_key: 'videos/x.mp4', fps: 24, frames: 96, duration_s: 4, width: 512, height: 512 },
    error: { code: 'attempts_exhausted', message: 'm' },
    last_error: null,
    queue_seq: 1,
  };
  const keys = (value: object) => Object.keys(value).sort();
  const view = jobView(record);
  assert.deepEqual(keys(schemaOf('Job').properties as Json), keys(view));
  assert.deepEqual(keys(schemaOf('JobResult').properties as Json), keys(view.result!));
  assert.deepEqual(keys(schemaOf('JobError').properties as Json), keys(view.error!));
  assert.deepEqual(keys(schemaOf('AdminJob').properties as Json), keys(adminJobView(record)));
});
