import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { createSwitchboardClient, type ErrorCode, type QueryResponse } from './index.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Reply {
  status: number;
  type: string;
  body: string;
}

/** A real HTTP server on a free loopback port that records each request and sends `reply`. */
describe('createSwitchboardClient against a real HTTP server', () => {
  let server: Server;
  let baseUrl: string;
  let received: Received[];
  let reply: Reply;
  const json = (status: number, body: unknown): Reply => ({
    status,
    type: 'application/json; charset=utf-8',
    body: JSON.stringify(body),
  });

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.writeHead(reply.status, { 'content-type': reply.type }).end(reply.body);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server?.close());
  beforeEach(() => {
    received = [];
  });

  const completion: QueryResponse = {
    id: 'cmpl-1',
    object: 'text_completion',
    created: 1_700_000_000,
    model: 'tiny',
    text: 'Hello',
    finish_reason: 'stop',
    usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
  };

  test('POST /query sends the key as a bearer token and the body as JSON, and parses the answer', async () => {
    reply = json(200, completion);
    const client = createSwitchboardClient({ baseUrl, apiKey: 'sk_test_key' });
    const { data, error, response } = await client.POST('/query', {
      body: { prompt: 'Say hello', max_tokens: 8 },
    });
    assert.equal(error, undefined);
    assert.equal(response.status, 200);
    assert.deepEqual(data, completion);
    assert.equal(data?.usage.total_tokens, 3);

    assert.equal(received.length, 1);
    const [request] = received;
    assert.equal(request?.method, 'POST');
    assert.equal(request?.url, '/query');
    assert.equal(request?.headers.authorization, 'Bearer sk_test_key');
    assert.match(request?.headers['content-type'] ?? '', /^application\/json/);
    assert.deepEqual(JSON.parse(request?.body ?? ''), { prompt: 'Say hello', max_tokens: 8 });
  });

  test('an error response comes back as the typed error body, with no data', async () => {
    reply = json(400, {
      error: {
        code: 'invalid_request',
        message: 'temperature: must be at most 2',
        request_id: 'req-1',
        param: 'temperature',
      },
    });
    const client = createSwitchboardClient({ baseUrl, apiKey: 'sk_test_key' });
    const { data, error, response } = await client.POST('/query', {
      body: { prompt: 'hi', temperature: 3 },
    });
    assert.equal(data, undefined);
    assert.equal(response.status, 400);
    assert.ok(error, 'an error');
    // Typed: `code` is the document's ErrorCode union, so this assignment compiles.
    const code: ErrorCode = error.error.code;
    assert.equal(code, 'invalid_request');
    assert.equal(error.error.param, 'temperature');
    assert.equal(error.error.request_id, 'req-1');
  });

  test('query and path parameters are filled in, and the admin token is sent the same way', async () => {
    reply = json(200, { data: [], has_more: false });
    const admin = createSwitchboardClient({ baseUrl, adminToken: 'admin-token-0123456789' });
    await admin.GET('/admin/api/jobs', { params: { query: { limit: 5 } } });
    reply = json(404, {
      error: { code: 'job_not_found', message: 'No such job.', request_id: 'req-2' },
    });
    const { error } = await admin.DELETE('/admin/api/jobs/{job_id}', {
      params: { path: { job_id: 'job/with space' } },
    });
    assert.equal(error?.error.code, 'job_not_found');
    assert.deepEqual(
      received.map((r) => [r.method, r.url, r.headers.authorization]),
      [
        ['GET', '/admin/api/jobs?limit=5', 'Bearer admin-token-0123456789'],
        ['DELETE', '/admin/api/jobs/job%2Fwith%20space', 'Bearer admin-token-0123456789'],
      ],
    );
  });

  test('without a credential no Authorization header is sent; both at once are refused', async () => {
    reply = json(200, { status: 'ok' });
    const { data } = await createSwitchboardClient({ baseUrl }).GET('/healthz');
    assert.deepEqual(data, { status: 'ok' });
    assert.equal(received[0]?.headers.authorization, undefined);
    assert.throws(
      () => createSwitchboardClient({ baseUrl, apiKey: 'sk_a', adminToken: 'admin-token-0123456789' }),
      /an apiKey or an adminToken, not both/,
    );
  });

  test('a fetch of the caller’s own is used for every call', async () => {
    reply = json(200, { status: 'ok' });
    const seen: string[] = [];
    const client = createSwitchboardClient({
      baseUrl,
      apiKey: 'sk_test_key',
      fetch: (request) => {
        seen.push(`${request.method} ${new URL(request.url).pathname}`);
        return fetch(request);
      },
    });
    await client.GET('/healthz');
    assert.deepEqual(seen, ['GET /healthz']);
    assert.equal(received.length, 1, 'the request still reached the server');
  });

  test("parseAs: 'stream' hands over the event stream unread, as the doc comment says", async () => {
    const events =
      'data: {"id":"cmpl-1","model":"tiny","index":0,"delta":"Hi"}\n\n' +
      'data: {"id":"cmpl-1","finish_reason":"stop","usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\n' +
      'data: [DONE]\n\n';
    reply = { status: 200, type: 'text/event-stream', body: events };
    const client = createSwitchboardClient({ baseUrl, apiKey: 'sk_test_key' });
    const { data, response } = await client.POST('/query', {
      body: { prompt: 'hi', stream: true },
      parseAs: 'stream',
    });
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    assert.ok(data, 'a stream');
    assert.equal(await new Response(data).text(), events);
    assert.deepEqual(JSON.parse(received[0]?.body ?? ''), { prompt: 'hi', stream: true });
  });
});
