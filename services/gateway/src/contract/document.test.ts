import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JobRecord } from '@switchboard/jobs';
import { adminJobView, jobView } from '../routes/job-view.js';
import { openApiDocument } from './document.js';

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
  429: ['rate_limited', 'session_limit', 'job_limit', 'quota_exceeded', 'concurrency_limit'],
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
  '/animate': ['get', 'post'],
  '/animate/{job_id}': ['get', 'delete'],
  '/api/videos/{job_id}.mp4': ['get'],
  '/api/videos/{job_id}.jpg': ['get'],
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
  '/admin/api/keys/{id}': ['get', 'patch', 'delete'],
  '/admin/api/keys/{id}/rotate': ['post'],
  '/admin/api/jobs': ['get'],
  '/admin/api/jobs/{job_id}': ['delete'],
  '/admin/api/status': ['get'],
  '/admin/api/browser/sessions/{id}': ['delete'],
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
    assert.match(node.$ref, /^#\/components\/(schemas|headers|securitySchemes)\/[^/]+$/, where);
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
        assert.ok(
          apiMdCodesByStatus[status]?.includes(code as string),
          `${method} ${path}: ${String(code)} is not a ${status}`,
        );
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
  const publicPaths = ['/healthz', '/readyz', '/openapi.json', '/docs', '/admin'];
  // The pages' own scripts and styles are as public as the pages.
  const isPageAsset = (path: string) => /^\/(admin|docs)\/[\w-]+\.(js|css)$/.test(path);
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

const schemaOf = (name: string) => ((doc.components as Json).schemas as Record<string, Json>)[name]!;
const operation = (path: string, method: string) =>
  (doc.paths as Record<string, Json>)[path]?.[method] as Json;

test('the served document never points readers at the contract file', () => {
  assert.doesNotMatch(JSON.stringify(openApiDocument), /API\.md|§/);
});

test('POST /animate takes the same fields as JSON and as a form, with file parts for the media', () => {
  const content = (operation('/animate', 'post').requestBody as Json).content as Json;
  assert.deepEqual(Object.keys(content).sort(), ['application/json', 'multipart/form-data']);
  const body = bodySchema('/animate', 'post');
  const form = bodySchema('/animate', 'post', 'multipart/form-data');
  const fields = [
    'backend',
    'image',
    'driving_video',
    'audio',
    'text',
    'voice',
    'fps',
    'duration_s',
    'seed',
    'width',
    'height',
    'motion_bucket_id',
    'noise_aug_strength',
  ];
  for (const schema of [body, form]) {
    assert.deepEqual(Object.keys(schema.properties as Json).sort(), [...fields].sort());
    assert.deepEqual(schema.required, ['backend', 'image']);
  }
  const p = body.properties as Record<string, Json>;
  assert.deepEqual(p.backend?.enum, ['video-diffusion', 'portrait', 'avatar']);
  assert.equal(p.text?.maxLength, 5000);
  assert.equal(p.seed?.type, 'integer');
  for (const side of [p.width, p.height])
    assert.deepEqual([side?.minimum, side?.maximum, side?.multipleOf], [64, 2048, 64]);
  assert.deepEqual(
    [p.motion_bucket_id?.minimum, p.motion_bucket_id?.maximum, p.motion_bucket_id?.default],
    [1, 255, 127],
  );
  assert.deepEqual(
    [p.noise_aug_strength?.minimum, p.noise_aug_strength?.maximum, p.noise_aug_strength?.default],
    [0, 1, 0.02],
  );
  const f = form.properties as Record<string, Json>;
  for (const media of ['image', 'driving_video', 'audio'])
    assert.equal(f[media]?.contentMediaType, 'application/octet-stream', `${media} may be a file part`);

  const post = operation('/animate', 'post');
  const idempotency = (post.parameters as Json[]).find((p) => p.name === 'Idempotency-Key');
  assert.equal((idempotency?.schema as Json).maxLength, 255);
  const responses = post.responses as Record<string, Json>;
  assert.ok('Location' in (responses[202]!.headers as Json));
  const codes = (status: string) => responses[status]?.['x-error-codes'];
  assert.deepEqual(Object.keys(responses).sort(), [
    '202',
    '400',
    '401',
    '403',
    '404',
    '413',
    '415',
    '422',
    '429',
    '500',
    '503',
  ]);
  assert.deepEqual(codes('403'), ['ip_not_allowed', 'tier_required']);
  assert.deepEqual(codes('404'), ['not_found']);
  assert.deepEqual(codes('422'), ['idempotency_key_reused']);
  assert.deepEqual([...(codes('429') as string[])].sort(), ['job_limit', 'rate_limited']);
  assert.deepEqual(codes('503'), ['unavailable']);
});

test('jobs are documented exactly as the gateway shows them', () => {
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
  const job = schemaOf('Job');
  assert.deepEqual(keys(job.properties as Json), keys(view));
  assert.deepEqual([...(job.required as string[])].sort(), keys(view));
  assert.deepEqual(keys(schemaOf('JobResult').properties as Json), keys(view.result!));
  assert.deepEqual([...(schemaOf('JobResult').required as string[])].sort(), keys(view.result!));
  assert.deepEqual(keys(schemaOf('JobError').properties as Json), keys(view.error!));
  assert.deepEqual(((schemaOf('JobError').properties as Json).code as Json).enum, [
    'attempts_exhausted',
    'upstream_failed',
    'upstream_timeout',
    'invalid_request',
    'invalid_audio',
    'unavailable',
    'internal',
  ]);
  assert.deepEqual(keys(schemaOf('AdminJob').properties as Json), keys(adminJobView(record)));
  assert.deepEqual([...(schemaOf('JobStatus').enum as string[])].sort(), [
    'canceled',
    'failed',
    'queued',
    'running',
    'succeeded',
  ]);

  for (const path of ['/animate', '/admin/api/jobs']) {
    const list = operation(path, 'get');
    const params: Record<string, Json> = Object.fromEntries(
      (list.parameters as Json[]).map((p) => [String(p.name), p.schema as Json]),
    );
    assert.deepEqual(Object.keys(params).sort(), ['after', 'limit', 'status'], path);
    assert.deepEqual([params.limit?.maximum, params.limit?.default], [100, 20], path);
  }
  const cancel = (path: string) => operation(path, 'delete').responses as Record<string, Json>;
  for (const path of ['/animate/{job_id}', '/admin/api/jobs/{job_id}']) {
    assert.deepEqual(cancel(path)[404]?.['x-error-codes'], ['job_not_found'], path);
    assert.deepEqual(cancel(path)[409]?.['x-error-codes'], ['job_finished'], path);
  }
  const status = (schemaOf('ClusterStatus').properties as Json).animation_jobs as Json;
  assert.deepEqual(
    [status.type, status.items],
    [['array', 'null'], { $ref: '#/components/schemas/AdminJob' }],
  );
});

test('videos and posters: the owner only, one byte range with 206, 416 past the end', () => {
  for (const [path, type] of [
    ['/api/videos/{job_id}.mp4', 'video/mp4'],
    ['/api/videos/{job_id}.jpg', 'image/jpeg'],
  ] as const) {
    const get = operation(path, 'get');
    assert.ok(
      (get.parameters as Json[]).some((p) => p.name === 'Range' && p.in === 'header'),
      path,
    );
    const responses = get.responses as Record<string, Json>;
    assert.deepEqual(Object.keys(responses[200]!.content as Json), [type], path);
    assert.deepEqual(Object.keys(responses[206]!.content as Json), [type], path);
    assert.ok('Content-Range' in (responses[206]!.headers as Json), path);
    assert.ok('Accept-Ranges' in (responses[200]!.headers as Json), path);
    assert.ok('Content-Range' in (responses[416]!.headers as Json), path);
    assert.deepEqual(Object.keys(responses[416]!.content as Json), ['application/json'], path);
    assert.deepEqual(responses[404]?.['x-error-codes'], ['not_found'], path);
  }
});
