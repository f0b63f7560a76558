import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Metadata, status } from '@grpc/grpc-js';
import {
  SwitchboardError,
  errorCodes,
  errorTable,
  fromGrpcError,
  httpStatusOf,
  toGrpcStatus,
} from './index.js';

// The public contract's codes, status by status (also the table of docs/api.md, checked there).
const contract: Record<number, string[]> = {
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

test('the table has exactly the codes of the public contract, each with its status', () => {
  const expected = Object.entries(contract).flatMap(([httpStatus, codes]) =>
    codes.map((code) => [code, Number(httpStatus)]),
  );
  assert.deepEqual(errorCodes.map((code) => [code, httpStatusOf(code)]).sort(), expected.sort());
});

test('every code survives the trip through gRPC with param and Retry-After', () => {
  for (const code of errorCodes) {
    const wire = toGrpcStatus(new SwitchboardError(code, { param: 'field', retryAfterSeconds: 3 }));
    assert.equal(wire.code, errorTable[code].grpc);
    const back = fromGrpcError({ code: wire.code, details: wire.details, metadata: wire.metadata });
    assert.equal(back.code, code);
    assert.equal(back.param, 'field');
    assert.equal(back.retryAfterSeconds, 3);
  }
});

test('internal errors do not carry their cause across the wire', () => {
  const wire = toGrpcStatus(new Error('secret database password in here'));
  assert.equal(wire.code, status.INTERNAL);
  assert.ok(!String(wire.details).includes('secret'));
  assert.equal(
    fromGrpcError({ code: wire.code, details: wire.details, metadata: wire.metadata }).code,
    'internal',
  );
});

test('bare statuses from a peer map through the one table', () => {
  const bare = (code: status) =>
    fromGrpcError({ code, details: 'connect ECONNREFUSED 10.0.0.1:50051', metadata: new Metadata() });
  assert.equal(bare(status.UNAVAILABLE).code, 'unavailable');
  assert.equal(bare(status.UNAVAILABLE).httpStatus, 503);
  assert.ok(!bare(status.UNAVAILABLE).message.includes('10.0.0.1'), 'no peer address in the message');
  assert.equal(bare(status.DEADLINE_EXCEEDED).code, 'upstream_timeout');
  assert.equal(bare(status.INTERNAL).code, 'internal');
  assert.equal(bare(status.UNIMPLEMENTED).httpStatus, 500);
});
