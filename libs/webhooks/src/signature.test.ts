import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { newSecret } from './secrets.js';
import { signatureHeader } from './signature.js';

const body = JSON.stringify({
  type: 'webhook.test',
  timestamp: '2026-01-01T00:00:00.000Z',
  data: { a: 'é' },
});

function headers(secrets: string[], id = 'evt_01', at = Math.floor(Date.now() / 1000)) {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(at),
    'webhook-signature': signatureHeader(secrets, id, at, body),
  };
}

describe('signatureHeader', () => {
  test('the official standardwebhooks verifier accepts it', () => {
    const secret = newSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    assert.deepEqual(new Webhook(secret).verify(body, headers([secret])), JSON.parse(body));
  });

  test('during a rotation either secret verifies; a third does not', () => {
    const [older, newer, other] = [newSecret(), newSecret(), newSecret()];
    const signed = headers([newer, older]);
    assert.equal(signed['webhook-signature'].split(' ').length, 2);
    assert.ok(new Webhook(older).verify(body, signed));
    assert.ok(new Webhook(newer).verify(body, signed));
    assert.throws(() => new Webhook(other).verify(body, signed));
  });

  test('a changed body, id or timestamp fails verification', () => {
    const secret = newSecret();
    const signed = headers([secret]);
    const verifier = new Webhook(secret);
    assert.throws(() => verifier.verify(body.replace('é', 'e'), signed));
    assert.throws(() => verifier.verify(body, { ...signed, 'webhook-id': 'evt_02' }));
    assert.throws(() =>
      verifier.verify(body, {
        ...signed,
        'webhook-timestamp': String(Number(signed['webhook-timestamp']) + 1),
      }),
    );
  });

  test('its output matches the official signer byte for byte', () => {
    const secret = newSecret();
    const at = new Date(1_767_225_600_000);
    assert.equal(
      signatureHeader([secret], 'evt_x', 1_767_225_600, body),
      new Webhook(secret).sign('evt_x', at, body),
    );
  });
});
