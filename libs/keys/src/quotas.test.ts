import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchboardError } from '@switchboard/errors';
import { isKeyRecord, viewFields, type KeyRecord } from './record.js';
import { validateCreate, validatePatch } from './validate.js';

function paramOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof SwitchboardError);
    assert.equal(error.code, 'invalid_request');
    return error.param;
  }
  assert.fail('expected a validation error');
}

const base = { name: 'tenant', tier: 'basic' as const };

test('quotas: a create without them has none; valid ones and null removals are kept', () => {
  assert.deepEqual(validateCreate(base).quotas, {});
  const quotas = {
    images: { limit: 7, period: 'day' },
    output_tokens: null,
    audio_seconds: { limit: 0, period: 'month' },
  };
  assert.deepEqual(validateCreate({ ...base, quotas } as never).quotas, quotas);
});

test('quotas: each wrong field is named in param', () => {
  const create = (quotas: unknown) => () => validateCreate({ ...base, quotas } as never);
  assert.equal(paramOf(create({ images: { limit: -1, period: 'day' } })), 'quotas.images.limit');
  assert.equal(paramOf(create({ images: { limit: 'NaN', period: 'day' } })), 'quotas.images.limit');
  assert.equal(paramOf(create({ images: { limit: '5', period: 'day' } })), 'quotas.images.limit');
  assert.equal(paramOf(create({ images: { limit: Number.NaN, period: 'day' } })), 'quotas.images.limit');
  assert.equal(paramOf(create({ images: { limit: Infinity, period: 'day' } })), 'quotas.images.limit');
  assert.equal(paramOf(create({ images: { limit: 5, period: 'week' } })), 'quotas.images.period');
  assert.equal(paramOf(create({ images: { limit: 5 } })), 'quotas.images.period');
  assert.equal(paramOf(create({ images: [5, 'day'] })), 'quotas.images');
  assert.equal(paramOf(create({ dollars: { limit: 5, period: 'day' } })), 'quotas.dollars');
  assert.equal(paramOf(create([])), 'quotas');
  assert.equal(paramOf(create('images')), 'quotas');
  assert.equal(paramOf(create(null)), 'quotas');
});

test('quotas: prototype keys from a JSON body are refused, and nothing leaks onto Object.prototype', () => {
  for (const body of [
    '{"__proto__": {"limit": 1, "period": "day"}}',
    '{"constructor": {"limit": 1, "period": "day"}}',
    '{"images": {"limit": 1, "period": "day", "__proto__": {"polluted": true}}}',
  ]) {
    const quotas: unknown = JSON.parse(body);
    try {
      validateCreate({ ...base, quotas } as never);
    } catch (error) {
      assert.ok(error instanceof SwitchboardError);
    }
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    assert.equal(({} as Record<string, unknown>)['limit'], undefined);
  }
  const first = JSON.parse('{"__proto__": {"limit": 1, "period": "day"}}') as unknown;
  assert.equal(
    paramOf(() => validateCreate({ ...base, quotas: first } as never)),
    'quotas.__proto__',
  );
});

test('quotas: a huge object is refused at its first unknown meter', () => {
  const huge: Record<string, unknown> = {};
  for (let i = 0; i < 100_000; i++) huge[`m${i}`] = { limit: 1, period: 'day' };
  assert.equal(
    paramOf(() => validateCreate({ ...base, quotas: huge })),
    'quotas.m0',
  );
});

test('quotas: a patch replaces them whole; a patch without them leaves them alone', () => {
  assert.deepEqual(validatePatch({ quotas: { images: { limit: 3, period: 'month' } } } as never), {
    quotas: { images: { limit: 3, period: 'month' } },
  });
  assert.deepEqual(validatePatch({ quotas: {} }), { quotas: {} });
  assert.equal('quotas' in validatePatch({ name: 'x' }), false);
  assert.equal(
    paramOf(() => validatePatch({ quotas: { images: { limit: -5, period: 'day' } } } as never)),
    'quotas.images.limit',
  );
});

const olderRecord = {
  id: 'k1',
  name: 'old',
  tier: 'professional',
  ip_allowlist: [],
  rate_limit_per_minute: null,
  created_at: '2026-01-01T00:00:00.000Z',
  status: 'active',
  prefix: 'sb_k1_ab',
  secrets: [{ alg: 'hmac-sha256', hash: 'a'.repeat(64), expires_at: null }],
};

test('key records: an older record without quotas is still accepted and shows {}', () => {
  assert.equal(isKeyRecord(olderRecord), true);
  assert.deepEqual(viewFields(olderRecord as KeyRecord, null).quotas, {});
});

test('key records: valid quotas are accepted, malformed ones make the record untrusted', () => {
  assert.equal(
    isKeyRecord({ ...olderRecord, quotas: { images: { limit: 7, period: 'day' }, pdfs: null } }),
    true,
  );
  assert.equal(isKeyRecord({ ...olderRecord, quotas: { images: { limit: -7, period: 'day' } } }), false);
  assert.equal(isKeyRecord({ ...olderRecord, quotas: { nope: null } }), false);
  assert.equal(isKeyRecord({ ...olderRecord, quotas: null }), false);
});
