// The declared routes in process, without brokers or workers: what is answered before any
// dependency is called — request validation, the tier gate, body limits, unknown routes — and
// the error dialect each answer is worded in.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import express from 'express';
import pino from 'pino';
import { httpStatusOf } from '@switchboard/errors';
import type { KeyRecord, Tier } from '@switchboard/keys';
import { createObjectStore } from '@switchboard/objectstore';
import { createRegistry } from '@switchboard/telemetry';
import { tierGate } from '../auth/tiers.js';
import { loadGatewayConfig } from '../config.js';
import { createGatewayMetrics } from '../ops/metrics.js';
import { adminApiRoutes, apiKeyRoutes, allRoutes } from '../route-catalogue.js';
import { RequestContext } from './context.js';
import { errorHandler, notFound } from './errors.js';
import { mountRoutes, RouteTable, type RouteDeps } from './route.js';

/** A dependency no request here may reach: calling anything on it fails the request with a 500. */
const inert: unknown = new Proxy(() => {}, {
  get: (_target, property) => (property === 'then' ? undefined : inert),
  apply: () => {
    throw new Error('a dependency was called');
  },
});
const unreachable = inert as never;

const config = loadGatewayConfig({
  ADMIN_TOKEN: 'routes-test-admin-token-0123456789',
  CLUSTER_SECRET: 'routes-test-cluster-secret-0123456789',
  KEY_PEPPER: 'routes-test-key-pepper-0123456789abcdef',
  JSON_BODY_LIMIT_BYTES: '2048',
  TIER_POLICIES: '{"basic":{"upload_limit_bytes":4096}}',
});

const key = (tier: Tier): KeyRecord => ({
  id: `key-${tier}`,
  name: tier,
  tier,
  ip_allowlist: [],
  rate_limit_per_minute: null,
  created_at: '2026-01-01T00:00:00.000Z',
  status: 'active',
  prefix: 'sb_key',
  secrets: [],
});

/** The diffusion worker's calls, each answered when the test says so. */
const generations: { seed: string | undefined; answer: (imageId: string) => void }[] = [];
const diffusion = {
  generate: (request: { seed?: string }) =>
    new Promise((resolve) =>
      generations.push({ seed: request.seed, answer: (image_id) => resolve({ image_id }) }),
    ),
};

let base = '';
let close = () => {};
before(async () => {
  const logger = pino({ level: 'silent' });
  const deps: RouteDeps = {
    config,
    logger,
    keys: unreachable,
    limiter: unreachable,
    callPlaces: unreachable,
    // Only the diffusion worker is reached, by the one test that generates images.
    clients: { diffusion } as never,
    events: unreachable,
    // Real counters: the image test's usage record fails to store (no usage store here) and is
    // counted and queued for retry, which must not fail the answered call.
    metrics: createGatewayMetrics(createRegistry('gateway')),
    readiness: unreachable,
    nats: unreachable,
    live: unreachable,
    // Job media are stored on disk here; no test below gets as far as storing one.
    objects: createObjectStore({ ...config.objectStore, directory: mkdtempSync(join(tmpdir(), 'routes-')) }),
    usage: unreachable,
    originOf: () => 'http://gateway.test',
    openApiJson: '{}',
  };
  // As server.ts wires it, with the key a request names in `x-test-tier` in place of authentication.
  const app = express();
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.use((req, res, next) => {
    res.locals.ctx = new RequestContext('req-test', logger);
    res.locals.ctx.key = key((req.get('x-test-tier') as Tier | undefined) ?? 'basic');
    next();
  });
  app.use(new RouteTable(allRoutes).matcher());
  app.use(tierGate());
  app.use(mountRoutes(adminApiRoutes, deps));
  app.use(mountRoutes(apiKeyRoutes, deps));
  app.use(notFound);
  app.use(errorHandler);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});
after(() => close());

const send = (path: string, body?: string, headers: Record<string, string> = {}, method = 'POST') =>
  fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body }),
  });
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  send(path, JSON.stringify(body), headers);

interface ErrorBody {
  error: { code: string; message: string; request_id: string; param?: string | null; type?: string };
}

/** A native error: the gateway's own body, with its status from the error table. */
async function expectError(res: Response, status: number, code: string, param?: string) {
  assert.equal(res.status, status, `expected ${status} ${code}`);
  const { error } = (await res.json()) as ErrorBody;
  assert.equal(error.code, code);
  if (param !== undefined) assert.equal(error.param, param);
  assert.equal(httpStatusOf(error.code as never), status, 'status agrees with the error table');
  assert.deepEqual(Object.keys(error).slice(0, 3), ['code', 'message', 'request_id'], 'the native body');
  return error;
}

/** An error in OpenAI's body: `{message, type, param, code, request_id}`. */
async function expectOpenAiError(res: Response, status: number, code: string, param: string | null) {
  assert.equal(res.status, status, `expected ${status} ${code}`);
  const { error } = (await res.json()) as ErrorBody;
  assert.deepEqual(Object.keys(error), ['message', 'type', 'param', 'code', 'request_id']);
  assert.equal(error.code, code);
  assert.equal(error.param, param);
  assert.equal(error.request_id, 'req-test');
  return error;
}

test('400 invalid_json for a malformed body', async () => {
  await expectError(await send('/query', '{"prompt": '), 400, 'invalid_json');
});

test('400 invalid_request naming the field: wrong type, out of range, missing', async () => {
  await expectError(await post('/query', { prompt: 5 }), 400, 'invalid_request', 'prompt');
  await expectError(await post('/query', { prompt: '' }), 400, 'invalid_request', 'prompt');
  await expectError(
    await post('/query', { prompt: 'x', temperature: 2.1 }),
    400,
    'invalid_request',
    'temperature',
  );
  await expectError(
    await post('/query', { prompt: 'x', temperature: -0.1 }),
    400,
    'invalid_request',
    'temperature',
  );
  await expectError(
    await post('/query', { prompt: 'x', max_tokens: 0 }),
    400,
    'invalid_request',
    'max_tokens',
  );
  await expectError(
    await post('/query', { prompt: 'x', stop: ['a', 'b', 'c', 'd', 'e'] }),
    400,
    'invalid_request',
    'stop',
  );
  await expectError(
    await post('/query', { prompt: 'x', stop: 'x'.repeat(501) }),
    400,
    'invalid_request',
    'stop',
  );
  await expectError(await post('/query', ['prompt']), 400, 'invalid_request');
  await expectError(
    await post('/generate-image', { prompt: 'x', width: 100 }),
    400,
    'invalid_request',
    'width',
  );
  await expectError(
    await post('/generate-image', { prompt: 'x', steps: 101 }),
    400,
    'invalid_request',
    'steps',
  );
  await expectError(
    await post('/generate-image', { prompt: 'x', guidance_scale: 31 }),
    400,
    'invalid_request',
    'guidance_scale',
  );
  await expectError(
    await post('/api/browser/session/create', { viewport_width: 99 }),
    400,
    'invalid_request',
    'viewport_width',
  );
  const pro = { 'x-test-tier': 'professional' };
  await expectError(
    await post('/animate', { backend: 'portrait', image: 'data:image/png;base64,AAAA' }, pro),
    400,
    'invalid_request',
    'driving_video',
  );
  await expectError(
    await post('/animate', { backend: 'video-diffusion', image: 'https://example.com/a.png' }, pro),
    400,
    'invalid_request',
    'image',
  );
});

test('under /v1 the same refusals come in OpenAI body, with their status and code', async () => {
  const error = await expectOpenAiError(
    await post('/v1/chat/completions', {
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 3,
    }),
    400,
    'invalid_request',
    'temperature',
  );
  assert.equal(error.type, 'invalid_request_error');
  await expectOpenAiError(await send('/v1/completions', '{"prompt": '), 400, 'invalid_json', null);
  await expectOpenAiError(
    await post('/v1/completions', { model: 'm', prompt: 'x', stop: ['ok', 'y'.repeat(501)] }),
    400,
    'invalid_request',
    'stop.1',
  );
  await expectOpenAiError(
    await post('/v1/images/generations', { prompt: 'x', n: 5 }),
    400,
    'invalid_request',
    'n',
  );
  await expectOpenAiError(await send('/v1/nope', undefined, {}, 'GET'), 404, 'not_found', null);
  const tier = await expectOpenAiError(await post('/v1/videos', {}), 403, 'tier_required', null);
  assert.equal(tier.type, 'permission_error');
});

test('403 tier_required before the body is read, from the tier each route declares', async () => {
  await expectError(await post('/animate', {}), 403, 'tier_required');
  await expectError(await send('/animate/job-1', undefined, {}, 'DELETE'), 403, 'tier_required');
  const declared = allRoutes.filter((route) => route.tier !== undefined).map((route) => route.path);
  assert.deepEqual([...new Set(declared)].sort(), [
    '/animate',
    '/animate/{job_id}',
    '/v1/videos',
    '/v1/videos/{id}',
    '/v1/videos/{id}/content',
  ]);
  // A spelling that reaches no handler is no way around the gate: it matches no route at all.
  for (const path of ['/Animate', '/ANIMATE/', '//animate', '/%61nimate', '/animate/']) {
    await expectError(await send(path, '{}'), 404, 'not_found');
  }
});

test('404 not_found for unknown routes and methods, session_not_found for an id that is no session', async () => {
  await expectError(await send('/nope', undefined, {}, 'GET'), 404, 'not_found');
  await expectError(await send('/query', undefined, {}, 'GET'), 404, 'not_found');
  await expectError(
    await post('/api/browser/session/not-a-uuid/navigate', { url: 'http://x' }),
    404,
    'session_not_found',
  );
  await expectError(
    await send('/animate/../../etc', undefined, { 'x-test-tier': 'professional' }, 'GET'),
    404,
    'not_found',
  );
});

test('413 payload_too_large over the route limit', async () => {
  await expectError(await post('/query', { prompt: 'x'.repeat(5000) }), 413, 'payload_too_large');
  await expectOpenAiError(
    await post('/v1/completions', { model: 'm', prompt: 'x'.repeat(5000) }),
    413,
    'payload_too_large',
    null,
  );
});

test('415 unsupported_media_type for a JSON route sent something else, and vice versa', async () => {
  await expectError(
    await send('/query', 'prompt=x', { 'content-type': 'application/x-www-form-urlencoded' }),
    415,
    'unsupported_media_type',
  );
  await expectError(await send('/transcribe', '{}'), 415, 'unsupported_media_type');
});

test('malformed percent-encoding in a path is a JSON 400, not an HTML page', async () => {
  await expectError(await send('/admin/api/keys/%E0%A4%A', undefined, {}, 'GET'), 400, 'invalid_request');
});

test('/v1/images/generations asks for its n images at once, so the worker can batch them', async () => {
  const answer = post('/v1/images/generations', { prompt: 'a cat', n: 3, seed: 7 });
  for (let wait = 0; generations.length < 3 && wait < 200; wait++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.equal(generations.length, 3, 'all three asked before any is answered');
  assert.deepEqual(
    generations.map((generation) => generation.seed),
    ['7', '8', '9'],
    'image i gets seed + i',
  );
  for (const i of [2, 0, 1]) generations[i]!.answer(`img-${i}`);
  const { data } = (await (await answer).json()) as { data: { url: string }[] };
  assert.deepEqual(
    data.map((image) => image.url),
    [0, 1, 2].map((i) => `http://gateway.test/api/images/img-${i}.png`),
    'in the order asked, whatever order they finish in',
  );
});
