import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OTLP/HTTP trace receiver for tests (JSON encoding, what the services' exporter sends): keeps
 * every span it is sent, reduced to what tests check, with the service.name of its resource.
 */

export interface ReceivedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base URL to give as OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces). */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Export requests received, whatever they held. */
  readonly requests: number;
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: {
        name: string;
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        kind?: number;
        attributes?: KeyValue[];
      }[];
    }[];
  }[];
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    attributes[key] = value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;
  }
  return attributes;
}

/**
 * An OTLP/HTTP (JSON) traces endpoint on loopback. With `requiredHeaders`, an export without them
 * is refused with 401, as a collector that wants a token does.
 */
export async function startOtlpReceiver(
  port = 0,
  host = '127.0.0.1',
  requiredHeaders: Record<string, string> = {},
): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let requests = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests += 1;
      if (req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        res.writeHead(415).end();
        return;
      }
      if (Object.entries(requiredHeaders).some(([name, value]) => req.headers[name] !== value)) {
        res.writeHead(401).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const name = attributesOf(resourceSpans.resource?.attributes)['service.name'];
        const service = typeof name === 'string' ? name : '';
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              service,
              name: span.name,
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              kind: span.kind ?? 0,
              attributes: attributesOf(span.attributes),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(port, host);
  await once(server, 'listening');
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`,
    spans,
    get requests() {
      return requests;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A fresh W3C trace context: `00-<trace id>-<parent span id>-01`. */
export function newTraceParent(): { traceId: string; spanId: string; header: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, header: `00-${traceId}-${spanId}-01` };
}

/**
 * An HTTP request sent from a chosen loopback address (127.0.0.2 …), so a test can come from a
 * trusted proxy or not while everything stays on loopback.
 */
export function requestFrom(
  localAddress: string,
  url: string,
  options: {
    method?: string;
    headers?: IncomingHttpHeaders | Record<string, string>;
    body?: Buffer | string;
    /** The response body in base64 rather than UTF-8. */
    binary?: boolean;
  },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, localAddress },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString(options.binary ? 'base64' : 'utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
