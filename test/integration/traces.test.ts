import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort, startCluster, type Cluster } from '@switchboard/devcluster';
import { makeAudioFixtures } from '../support/audio.js';
import { repoRoot } from '../support/gateway.js';
import {
  newTraceParent,
  requestFrom,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../support/otlp-receiver.js';
import { startTestSite, type TestSite } from '../support/test-site.js';
import { localClusterEnv } from '../support/local-cluster-env.js';

// Traces from a real cluster, exported over OTLP/HTTP to a receiver in the test: each capability's
// request is one trace from the gateway into the worker (an animation job across the queue), and
// only a trusted proxy may choose the trace a request joins.

/** The address the test's "ingress" sends from; the gateway trusts it (TRUSTED_PROXIES). */
const PROXY = '127.0.0.2';
/** An ordinary client, not trusted. */
const CLIENT = '127.0.0.1';

/** How long spans may take to arrive: batches leave every 200 ms here. */
const SPAN_DEADLINE_MS = 20_000;

interface Traced {
  /** The trace id the proxy sent in traceparent. */
  traceId: string;
  /** The span id it sent as the parent: the root the gateway's span hangs from. */
  rootSpanId: string;
}

async function clusterExportingTo(
  receiver: OtlpReceiver | undefined,
  site: TestSite,
  stateDir: string,
  headersFile?: string,
  webhookHost?: string,
): Promise<Cluster> {
  return startCluster({
    root: repoRoot,
    env: localClusterEnv(stateDir, await freePort(), {
      BROWSER_ALLOWED_HOSTS: site.host,
      TRUSTED_PROXIES: `${PROXY}/32`,
      OTEL_BSP_SCHEDULE_DELAY: '200',
      ...(receiver ? { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } : {}),
      ...(headersFile ? { OTEL_EXPORTER_OTLP_HEADERS_FILE: headersFile } : {}),
      ...(webhookHost ? { WEBHOOK_ALLOWED_HOSTS: webhookHost } : {}),
    }),
  });
}

/** A webhook endpoint on loopback that keeps the headers of every delivery it gets. */
async function startHookReceiver(): Promise<{
  host: string;
  deliveries: IncomingHttpHeaders[];
  close(): void;
}> {
  const deliveries: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    deliveries.push(req.headers);
    req.resume().on('end', () => res.writeHead(204).end());
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { host: `127.0.0.1:${port}`, deliveries, close: () => server.close() };
}

class Client {
  constructor(
    private readonly base: string,
    readonly key: string,
  ) {}

  /** A request through the trusted proxy, in a new trace of its own. */
  async traced(path: string, body?: unknown, expected = 200): Promise<{ trace: Traced; body: string }> {
    const parent = newTraceParent();
    const res = await this.send(PROXY, path, body, { traceparent: parent.header });
    assert.equal(res.status, expected, `${path}: ${res.body}`);
    return { trace: { traceId: parent.traceId, rootSpanId: parent.spanId }, body: res.body };
  }

  send(
    from: string,
    path: string,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: string }> {
    return requestFrom(from, `${this.base}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${this.key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  async tracedForm(path: string, form: FormData): Promise<Traced> {
    const encoded = new Request('http://form.invalid', { method: 'POST', body: form });
    const parent = newTraceParent();
    const res = await requestFrom(PROXY, `${this.base}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${this.key}`,
        'content-type': encoded.headers.get('content-type') ?? '',
        traceparent: parent.header,
      },
      body: Buffer.from(await encoded.arrayBuffer()),
    });
    assert.equal(res.status, 200, `${path}: ${res.body}`);
    return { traceId: parent.traceId, rootSpanId: parent.spanId };
  }
}

async function createKey(base: string, adminToken: string): Promise<string> {
  const res = await fetch(`${base}/admin/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'traces', tier: 'enterprise' }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { key: string }).key;
}

/**
 * Waits until the trace holds a span of `worker` (and whatever `also` names), then checks it is
 * one tree: the gateway's server span hangs from the proxy's span, every other span from a span of
 * the trace, and the worker's spans are reached from the gateway's.
 */
async function assertOneTrace(
  receiver: OtlpReceiver,
  what: string,
  trace: Traced,
  worker: string,
  also: readonly string[] = [],
): Promise<ReceivedSpan[]> {
  const deadline = Date.now() + SPAN_DEADLINE_MS;
  let spans: ReceivedSpan[] = [];
  const complete = () =>
    spans.some(
      // A worker serving a call has its gRPC server span; one taking a job, the job's spans.
      (span) => span.service === `switchboard-${worker}` && (span.kind === 2 || also.includes(span.name)),
    ) &&
    also.every((name) => spans.some((span) => span.name === name)) &&
    // The gateway's own span ends last (a stream's with its last byte) and may come a batch later.
    spans.some((span) => span.service === 'switchboard-gateway' && span.parentSpanId === trace.rootSpanId);
  for (;;) {
    spans = receiver.spans.filter((span) => span.traceId === trace.traceId);
    if (complete() || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const summary = spans.map((span) => `${span.service} ${span.name} ${span.spanId}<-${span.parentSpanId}`);
  assert.ok(
    complete(),
    `${what}: no span of ${worker}, of ${also.join(', ') || 'nothing more'} or of the gateway under the proxy's in\n${summary.join('\n')}`,
  );
  const ids = new Set(spans.map((span) => span.spanId));
  const gatewayRoots = spans.filter(
    (span) => span.service === 'switchboard-gateway' && span.parentSpanId === trace.rootSpanId,
  );
  assert.ok(
    gatewayRoots.length >= 1,
    `${what}: the gateway's span continues the proxy's\n${summary.join('\n')}`,
  );
  for (const span of spans) {
    assert.ok(
      span.parentSpanId === trace.rootSpanId || ids.has(span.parentSpanId),
      `${what}: ${span.service} ${span.name} hangs from a span outside the trace\n${summary.join('\n')}`,
    );
  }
  // Walking up from each of the worker's spans reaches the gateway.
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  for (const span of spans.filter((s) => s.service === `switchboard-${worker}`)) {
    let cursor: ReceivedSpan | undefined = span;
    while (cursor && cursor.service !== 'switchboard-gateway') cursor = byId.get(cursor.parentSpanId);
    assert.ok(cursor, `${what}: ${span.name} is not below a gateway span\n${summary.join('\n')}`);
  }
  return spans;
}

/** The names of `names` with no span in `spans`: the workers' own spans, checked by name only. */
function softlyExpect(spans: ReceivedSpan[], names: readonly string[]): string[] {
  return names.filter((name) => !spans.some((span) => span.name === name));
}

test(
  'a query stream, a transcription, an image, a browser navigation and an animation job each form one trace from the gateway into the worker',
  { timeout: 240_000 },
  async (t) => {
    // A collector that wants a token, which every process reads from a file (as the chart mounts it).
    const receiver = await startOtlpReceiver(0, '127.0.0.1', { authorization: 'Bearer collector-token' });
    const site = await startTestSite();
    const hooks = await startHookReceiver();
    const stateDir = mkdtempSync(join(tmpdir(), 'sb-traces-'));
    const headersFile = join(stateDir, 'otlp-headers');
    writeFileSync(headersFile, 'authorization=Bearer%20collector-token\n');
    t.after(async () => {
      await site.stop();
      hooks.close();
      await receiver.close();
      rmSync(stateDir, { recursive: true, force: true });
    });
    const cluster = await clusterExportingTo(receiver, site, stateDir, headersFile, hooks.host);
    t.after(() => cluster.stop());
    const client = new Client(cluster.gatewayUrl, await createKey(cluster.gatewayUrl, cluster.adminToken));
    const missing: string[] = [];

    const query = await client.traced('/query', { prompt: 'Once upon a time', max_tokens: 8, stream: true });
    assert.match(query.body, /data: \[DONE\]/);
    const querySpans = await assertOneTrace(receiver, '/query', query.trace, 'llm');
    missing.push(...softlyExpect(querySpans, ['llm.queue', 'llm.prefill', 'llm.decode']));

    const audio = await makeAudioFixtures(3);
    try {
      const form = new FormData();
      form.append('file', new Blob([audio.long]), 'speech.wav');
      const transcribe = await client.tracedForm('/transcribe', form);
      const transcribeSpans = await assertOneTrace(receiver, '/transcribe', transcribe, 'whisper');
      missing.push(...softlyExpect(transcribeSpans, ['whisper.recognize']));
    } finally {
      await audio.remove();
    }

    const image = await client.traced('/generate-image', {
      prompt: 'a lighthouse',
      width: 64,
      height: 64,
      steps: 2,
    });
    const imageSpans = await assertOneTrace(receiver, '/generate-image', image.trace, 'diffusion');
    missing.push(...softlyExpect(imageSpans, ['diffusion.queue', 'diffusion.denoise', 'diffusion.vae']));
    const imageUrl = (JSON.parse(image.body) as { url: string }).url;
    const png = await requestFrom(CLIENT, `${cluster.gatewayUrl}${imageUrl}`, {
      headers: { authorization: `Bearer ${client.key}` },
      binary: true,
    });
    assert.equal(png.status, 200);

    const created = await client.traced('/api/browser/session/create', {}, 201);
    const sessionId = (JSON.parse(created.body) as { session_id: string }).session_id;
    const navigate = await client.traced(`/api/browser/session/${sessionId}/navigate`, {
      url: `${site.origin}/form`,
    });
    const navigateSpans = await assertOneTrace(receiver, 'navigate', navigate.trace, 'browser');
    missing.push(...softlyExpect(navigateSpans, ['browser.navigate']));
    await client.traced(`/api/browser/session/${sessionId}/close`, {});

    // A job: submitted in the request's trace, attempted by the worker after the queue, its events
    // delivered to the key's webhook endpoint in that trace too.
    const hook = await client.send(CLIENT, '/webhooks', {
      url: `http://${hooks.host}/`,
      events: ['animate.job.*'],
    });
    assert.equal(hook.status, 201, hook.body);
    const animate = await client.traced(
      '/animate',
      { backend: 'video-diffusion', image: `data:image/png;base64,${png.body}`, fps: 8, duration_s: 1 },
      202,
    );
    const jobId = (JSON.parse(animate.body) as { job_id: string }).job_id;
    let status = 'queued';
    const until = Date.now() + 60_000;
    while (!['succeeded', 'failed', 'canceled'].includes(status) && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const res = await client.send(CLIENT, `/animate/${jobId}`, undefined);
      status = (JSON.parse(res.body) as { status: string }).status;
    }
    assert.equal(status, 'succeeded');
    const jobSpans = await assertOneTrace(receiver, '/animate', animate.trace, 'animation', [
      'animation.submit',
      'animation.take',
      'animation.attempt',
      'animation.store',
      'webhooks.deliver',
    ]);
    const [attempt] = jobSpans.filter((span) => span.name === 'animation.attempt');
    assert.equal(attempt?.service, 'switchboard-animation');
    assert.equal(attempt?.attributes['job.id'], jobId);
    assert.equal(Number(attempt?.attributes['job.attempt']), 1);
    const [submit] = jobSpans.filter((span) => span.name === 'animation.submit');
    assert.equal(submit?.service, 'switchboard-gateway');
    assert.equal(attempt?.parentSpanId, submit?.spanId, 'the attempt continues the submit across the queue');
    assert.equal(jobSpans.find((span) => span.name === 'animation.take')?.parentSpanId, submit?.spanId);
    const render = jobSpans.find((span) => span.name === 'animation.render');
    assert.equal(render?.parentSpanId, attempt?.spanId);
    const delivery = jobSpans.find((span) => span.name === 'webhooks.deliver');
    assert.equal(delivery?.service, 'switchboard-webhooks');
    assert.equal(delivery?.attributes['server.address'], '127.0.0.1');
    // The trace stays inside: the endpoint got the events, none with the cluster's traceparent.
    assert.ok(hooks.deliveries.length >= 1, 'the endpoint got the job’s events');
    assert.deepEqual(
      hooks.deliveries.filter((headers) => headers.traceparent !== undefined),
      [],
      'a delivery carries no traceparent',
    );

    // An ordinary client cannot choose its trace: its traceparent is dropped, and its request is
    // traced under a trace id of the gateway's own.
    const forged = newTraceParent();
    const untrusted = await client.send(
      CLIENT,
      '/query',
      { prompt: 'Once', max_tokens: 2 },
      {
        traceparent: forged.header,
      },
    );
    assert.equal(untrusted.status, 200, untrusted.body);
    const spansBefore = receiver.spans.length;
    const deadline = Date.now() + SPAN_DEADLINE_MS;
    while (receiver.spans.length === spansBefore && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(
      receiver.spans.filter((span) => span.traceId === forged.traceId).length,
      0,
      'an untrusted client’s traceparent is not continued',
    );

    assert.deepEqual(missing, [], 'the workers’ own spans for the work that matters are in the traces');
  },
);

test('with no OTLP endpoint configured, no process exports anything', { timeout: 180_000 }, async (t) => {
  // The exporter's default endpoint is localhost:4318: listen there (IPv4 and IPv6), and nothing
  // may arrive.
  const receivers = [await startOtlpReceiver(4318), await startOtlpReceiver(4318, '::1')];
  const site = await startTestSite();
  const stateDir = mkdtempSync(join(tmpdir(), 'sb-traces-off-'));
  t.after(async () => {
    await site.stop();
    for (const receiver of receivers) await receiver.close();
    rmSync(stateDir, { recursive: true, force: true });
  });
  const cluster = await clusterExportingTo(undefined, site, stateDir);
  t.after(() => cluster.stop());
  const client = new Client(cluster.gatewayUrl, await createKey(cluster.gatewayUrl, cluster.adminToken));
  const parent = newTraceParent();
  const res = await client.send(
    PROXY,
    '/query',
    { prompt: 'Once', max_tokens: 4 },
    { traceparent: parent.header },
  );
  assert.equal(res.status, 200, res.body);
  // Several batch delays: a process that traced would have exported by now.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  assert.deepEqual(
    receivers.map((receiver) => receiver.requests),
    [0, 0],
  );
});
