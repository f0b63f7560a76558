import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { admin, bearer, createKey, type CreatedKey } from '../support/admin.js';
import { errorOf, startStack, type Stack } from '../support/stack.js';

/**
 * Inputs that are the client's mistake and once answered 500, a bare status line or an empty
 * body: each gets its 4xx with the JSON error, whose request_id is the X-Request-Id header.
 */
describe('bad inputs answer 4xx with the JSON error', { timeout: 60_000 }, () => {
  let stack: Stack;
  let key: CreatedKey;

  before(async () => {
    stack = await startStack();
    key = await createKey(stack.gateway);
  });
  after(() => stack?.stop());

  /** The error of `res`, checked: status, code, param, and request_id equal to X-Request-Id. */
  async function expectError(res: Response, status: number, code: string, param?: string) {
    const what = `${res.url} ${status} ${code}`;
    assert.equal(res.status, status, what);
    const requestId = res.headers.get('x-request-id');
    assert.ok(requestId, `${what}: X-Request-Id`);
    const error = await errorOf(res);
    assert.equal(error.code, code, what);
    assert.equal(error.request_id, requestId, what);
    assert.equal(error.param, param, what);
    return error;
  }

  /** One raw exchange: `request` is written as it is; resolves with all the gateway sent back. */
  function rawExchange(request: string): Promise<string> {
    const { port } = new URL(stack.gateway.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      // The gateway may cut the connection while the client still writes: what came back counts.
      socket.on('error', () => resolve(text));
      socket.on('close', () => resolve(text));
      socket.setTimeout(10_000, () => reject(new Error(`no answer: ${text}`)));
      socket.write(request);
    });
  }

  /** A raw HTTP/1.1 answer split into status, lower-cased headers and the JSON body. */
  function parseRaw(text: string) {
    const split = text.indexOf('\r\n\r\n');
    assert.ok(split > 0, `a whole answer: ${JSON.stringify(text.slice(0, 200))}`);
    const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
    const headers = Object.fromEntries(
      lines.map((line) => {
        const colon = line.indexOf(':');
        return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
      }),
    );
    const body = text.slice(split + 4);
    assert.equal(Buffer.byteLength(body), Number(headers['content-length']), 'Content-Length is the body');
    return {
      status: Number(statusLine!.split(' ')[1]),
      headers,
      error: (JSON.parse(body) as { error: Record<string, unknown> }).error,
    };
  }

  const staticFiles = [
    '/docs',
    '/docs/docs.js',
    '/docs/scalar.js',
    '/admin',
    '/admin/dashboard.css',
    '/admin/dashboard.js',
    '/admin/lit-html.js',
  ];

  it('a Range past the end of /docs, /admin or a file they load is 416 with Content-Range', async () => {
    for (const path of staticFiles) {
      const url = `${stack.gateway.url}${path}`;
      const whole = await fetch(url);
      assert.equal(whole.status, 200, path);
      const size = (await whole.arrayBuffer()).byteLength;
      for (const range of ['bytes=999999999-', `bytes=${size}-${size + 10}`, 'bytes=-0']) {
        const res = await fetch(url, { headers: { range } });
        assert.equal(res.headers.get('content-range'), `bytes */${size}`, `${path} ${range}`);
        assert.equal(res.headers.get('etag'), null, `${path}: the error is not the file`);
        await expectError(res, 416, 'invalid_request');
      }
      // A range inside the file is still served in part.
      const part = await fetch(url, { headers: { range: 'bytes=0-3' } });
      assert.equal(part.status, 206, path);
      assert.equal(part.headers.get('content-range'), `bytes 0-3/${size}`, path);
    }
  });

  it('an If-Match the file does not meet is 412 with the JSON error', async () => {
    for (const path of ['/docs', '/admin/dashboard.js']) {
      const res = await fetch(`${stack.gateway.url}${path}`, { headers: { 'if-match': '"not-this-one"' } });
      await expectError(res, 412, 'invalid_request');
    }
  });

  it('header fields too large (a 100 KB query string, a 100 KB header) are 431 with the JSON error', async () => {
    const host = new URL(stack.gateway.url).host;
    for (const request of [
      `GET /models?q=${'a'.repeat(100_000)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      `GET /models HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${'b'.repeat(100_000)}\r\n\r\n`,
      `GET /v1/models?q=${'a'.repeat(100_000)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
    ]) {
      const { status, headers, error } = parseRaw(await rawExchange(request));
      assert.equal(status, 431);
      assert.match(headers['content-type'] ?? '', /^application\/json/);
      assert.equal(error.code, 'invalid_request');
      assert.equal(typeof error.message, 'string');
      assert.match(headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);
      assert.equal(error.request_id, headers['x-request-id']);
      assert.match(headers.connection ?? '', /close/i);
    }
    // fetch sees the same answer (it may still be writing the URL when the answer comes).
    const res = await fetch(`${stack.gateway.url}/models?q=${'a'.repeat(100_000)}`, {
      headers: bearer(key.key),
    });
    await expectError(res, 431, 'invalid_request');
  });

  it('requests that are not HTTP are 400 with the JSON error', async () => {
    for (const request of ['GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n', 'HELLO\r\n\r\n']) {
      const { status, headers, error } = parseRaw(await rawExchange(request));
      assert.equal(status, 400, request);
      assert.equal(error.code, 'invalid_request');
      assert.equal(error.request_id, headers['x-request-id']);
    }
  });

  it('a long URL still within the header limit reaches the routes (no 414, no 431)', async () => {
    const path = `/models?q=${'a'.repeat(8_000)}`;
    await expectError(await fetch(`${stack.gateway.url}${path}`), 401, 'unauthorized');
    const res = await fetch(`${stack.gateway.url}/no-such-route?q=${'a'.repeat(8_000)}`, {
      headers: bearer(key.key),
    });
    await expectError(res, 404, 'not_found');
  });

  it('/v1 errors carry the request id in OpenAI’s error object', async () => {
    const res = await fetch(`${stack.gateway.url}/v1/models`, {
      headers: { 'x-request-id': 'req-openai-12345' },
    });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('x-request-id'), 'req-openai-12345');
    const body = (await res.json()) as { error: Record<string, unknown> };
    assert.deepEqual(body, {
      error: {
        message: body.error.message,
        type: 'authentication_error',
        param: null,
        code: 'unauthorized',
        request_id: 'req-openai-12345',
      },
    });
    const bad = await fetch(`${stack.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer(key.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'x', messages: 'not a list' }),
    });
    assert.equal(bad.status, 400);
    const { error } = (await bad.json()) as { error: Record<string, unknown> };
    assert.equal(error.code, 'invalid_request');
    assert.equal(error.param, 'messages');
    assert.equal(error.request_id, bad.headers.get('x-request-id'));
  });

  it('key names with control, unpaired surrogate or bidirectional characters are 400 naming name', async () => {
    const created = await createKey(stack.gateway, { name: 'plain' });
    const names = [
      'ci\u0000key',
      'ci\u001bkey',
      'ci\nkey',
      'trailing\t',
      'ci\u0085key',
      'ci\u009bkey',
      'ci\ud800key',
      'ci\udc00',
      'ci\u202ekey',
      'ci\u202akey',
      'ci\u2066key\u2069',
      'ci\u200fkey',
      'ci\u061ckey',
    ];
    for (const name of names) {
      await expectError(
        await admin(stack.gateway, 'POST', '/keys', { name, tier: 'basic' }),
        400,
        'invalid_request',
        'name',
      );
      await expectError(
        await admin(stack.gateway, 'PATCH', `/keys/${created.id}`, { name }),
        400,
        'invalid_request',
        'name',
      );
    }
    // Unchanged by the refused edits; text of any script and emoji remain fine.
    const kept = (await (await admin(stack.gateway, 'GET', `/keys/${created.id}`)).json()) as {
      name: string;
    };
    assert.equal(kept.name, 'plain');
    const fine = await admin(stack.gateway, 'POST', '/keys', { name: 'فريق ☕ チーム 🚀', tier: 'basic' });
    assert.equal(fine.status, 201, await fine.clone().text());
    assert.equal(((await fine.json()) as { name: string }).name, 'فريق ☕ チーム 🚀');
  });
});
