import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UrlNotAllowedError } from '@switchboard/address-guard';
import { checkWebhookUrl, webhookAllowedHosts } from './target.js';

const reason = (expected: string) => (error: unknown) =>
  error instanceof UrlNotAllowedError && error.reason === expected;

test('https on any port passes, with the canonical host and the port it connects to', () => {
  const none = webhookAllowedHosts([]);
  assert.deepEqual(checkWebhookUrl(new URL('https://Hooks.Example.com./in'), none), {
    host: 'hooks.example.com',
    port: 443,
  });
  assert.deepEqual(checkWebhookUrl(new URL('https://hooks.example.com:8443/'), none), {
    host: 'hooks.example.com',
    port: 8443,
  });
});

test('http only to an exempt host; credentials never', () => {
  const none = webhookAllowedHosts([]);
  assert.throws(() => checkWebhookUrl(new URL('http://hooks.example.com/'), none), reason('scheme'));
  assert.throws(() => checkWebhookUrl(new URL('ftp://hooks.example.com/'), none), reason('scheme'));
  const exempt = webhookAllowedHosts(['127.0.0.1:9000']);
  assert.deepEqual(checkWebhookUrl(new URL('http://127.0.0.1:9000/'), exempt), {
    host: '127.0.0.1',
    port: 9000,
  });
  assert.throws(() => checkWebhookUrl(new URL('http://127.0.0.1:9001/'), exempt), reason('scheme'));
  assert.throws(
    () => checkWebhookUrl(new URL('https://user:pass@hooks.example.com/'), none),
    reason('credentials'),
  );
});
