import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Request } from 'express';
import { CidrSet } from './client-ip.js';
import { publicOrigin, webSocketOrigin } from './public-origin.js';

/** Just what publicOrigin reads of a request: the socket and the headers. */
function request(peer: string, headers: Record<string, string>, encrypted = false): Request {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    socket: { remoteAddress: peer, ...(encrypted ? { encrypted: true } : {}) },
    get: (name: string) => lower[name.toLowerCase()],
  } as unknown as Request;
}

const proxies = new CidrSet(['10.0.0.0/8']);
const forwarded = {
  host: 'gateway:8080',
  'x-forwarded-proto': 'https',
  'x-forwarded-host': 'api.example.com',
};

test('behind a trusted proxy the forwarded scheme and host win', () => {
  assert.equal(publicOrigin(request('10.1.2.3', forwarded), proxies, undefined), 'https://api.example.com');
  assert.equal(
    publicOrigin(
      request('::ffff:10.1.2.3', { ...forwarded, 'x-forwarded-proto': 'http, https' }),
      proxies,
      undefined,
    ),
    'https://api.example.com',
    'the right-most value, written by the nearest proxy',
  );
});

test('forwarding headers from anyone else are ignored', () => {
  assert.equal(publicOrigin(request('203.0.113.9', forwarded), proxies, undefined), 'http://gateway:8080');
  assert.equal(
    publicOrigin(request('10.1.2.3', forwarded), new CidrSet([]), undefined),
    'http://gateway:8080',
  );
  assert.equal(
    publicOrigin(request('203.0.113.9', { host: 'api:443' }, true), proxies, undefined),
    'https://api:443',
  );
});

test('PUBLIC_BASE_URL wins; odd hosts never reach the URL', () => {
  assert.equal(
    publicOrigin(request('10.1.2.3', forwarded), proxies, 'https://public.example'),
    'https://public.example',
  );
  assert.equal(
    publicOrigin(request('203.0.113.9', { host: 'a b"<' }), proxies, undefined),
    'http://localhost',
  );
  assert.equal(
    publicOrigin(request('10.1.2.3', { host: 'ok:1', 'x-forwarded-host': 'x/../y' }), proxies, undefined),
    'http://localhost',
  );
  assert.equal(webSocketOrigin('https://api.example.com'), 'wss://api.example.com');
  assert.equal(webSocketOrigin('http://127.0.0.1:8080'), 'ws://127.0.0.1:8080');
});
