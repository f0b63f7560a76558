import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { context, trace } from '@opentelemetry/api';
import { createLogger } from './logger.js';
import { withSpan } from './spans.js';
import { captureSpans } from './test-support.js';
import {
  extractTraceContext,
  injectTraceContext,
  otlpHeadersFromFile,
  startTracing,
  tracingEnabled,
} from './tracing.js';

class Headers {
  readonly values = new Map<string, string>();
  get(key: string): string {
    return this.values.get(key) ?? '';
  }
  set(key: string, value: string): void {
    this.values.set(key, value);
  }
}

test('tracing is on only when an OTLP endpoint is configured', () => {
  assert.equal(tracingEnabled({}), false);
  assert.equal(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }), false);
  assert.equal(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }), true);
  assert.equal(
    tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }),
    true,
  );
});

test('without an endpoint, startTracing registers nothing', async () => {
  const tracing = await startTracing({ service: 'test', env: {} });
  assert.equal(tracing.enabled, false);
  await tracing.shutdown();
  assert.equal(trace.getActiveSpan(), undefined);
});

test('a trace context survives a trip through message headers', async () => {
  const spans = captureSpans();
  const headers = new Headers();
  await withSpan('test', 'test.producer', {}, () => injectTraceContext(headers));
  assert.match(headers.get('traceparent'), /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  const consumed = trace.getTracer('test').startSpan('test.consumer', {}, extractTraceContext(headers));
  consumed.end();
  const [producer] = spans.named('test.producer');
  const [consumer] = spans.named('test.consumer');
  assert.ok(producer && consumer);
  assert.equal(consumer.traceId, producer.traceId);
  assert.equal(consumer.parentSpanId, producer.spanId);
});

test('a message without a trace context starts a new trace, whatever is active', async () => {
  const spans = captureSpans();
  await withSpan('test', 'test.loop', {}, () => {
    trace.getTracer('test').startSpan('test.orphan', {}, extractTraceContext(new Headers())).end();
    trace.getTracer('test').startSpan('test.unheaded', {}, extractTraceContext(undefined)).end();
  });
  assert.equal(spans.named('test.orphan')[0]?.parentSpanId, undefined);
  assert.equal(spans.named('test.unheaded')[0]?.parentSpanId, undefined);
});

test('log lines inside a recording span carry its trace and span ids, others none', async () => {
  captureSpans();
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ service: 'test', destination });
  let ids: { traceId: string; spanId: string } | undefined;
  await withSpan('test', 'test.request', {}, (span) => {
    ids = span.spanContext();
    logger.info('inside');
  });
  context.with(context.active(), () => logger.info('outside'));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(lines[0]?.trace_id, ids?.traceId);
  assert.equal(lines[0]?.span_id, ids?.spanId);
  assert.equal('trace_id' in (lines[1] ?? {}), false);
  assert.equal('span_id' in (lines[1] ?? {}), false);
});

test("export headers given as a file are read in the variable's own format", () => {
  assert.equal(otlpHeadersFromFile({}), undefined);
  const dir = mkdtempSync(join(tmpdir(), 'otlp-headers-'));
  try {
    const file = join(dir, 'headers');
    writeFileSync(file, 'authorization=Bearer%20s3cr3t, x-scope = tenant-a\n');
    assert.deepEqual(otlpHeadersFromFile({ OTEL_EXPORTER_OTLP_HEADERS_FILE: file }), {
      authorization: 'Bearer s3cr3t',
      'x-scope': 'tenant-a',
    });
    assert.throws(
      () => otlpHeadersFromFile({ OTEL_EXPORTER_OTLP_HEADERS_FILE: join(dir, 'missing') }),
      /ENOENT/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
