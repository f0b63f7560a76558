import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSpanIn } from '@switchboard/telemetry';
import { captureSpans } from '@switchboard/telemetry/test-support';
import { sendTraced, traceContextOf, traceHeaders } from './trace.js';

test('outside a trace, messages carry no trace headers', () => {
  assert.equal(traceHeaders(), undefined);
});

test('a message sent traced carries its span, and the receiver’s spans are its children', async () => {
  const spans = captureSpans();
  const sent = await sendTraced('test', 'test.send', { 'job.id': 'j1' }, (headers) =>
    Promise.resolve(headers),
  );
  assert.ok(sent, 'headers while a span is recording');
  startSpanIn(traceContextOf({ headers: sent }), 'test', 'test.receive').end();
  const [send] = spans.named('test.send');
  const [receive] = spans.named('test.receive');
  assert.equal(send?.attributes['job.id'], 'j1');
  assert.equal(receive?.traceId, send?.traceId);
  assert.equal(receive?.parentSpanId, send?.spanId);
});

test('a message without headers starts a trace of its own', () => {
  const spans = captureSpans();
  startSpanIn(traceContextOf({}), 'test', 'test.orphan').end();
  assert.equal(spans.named('test.orphan')[0]?.parentSpanId, undefined);
});
