import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { prometheusConfig, startPrometheus, targetGroups } from './prometheus.js';

test('every target is labelled with the namespace and its pod', () => {
  assert.deepEqual(targetGroups([{ pod: 'llm-0', address: '127.0.0.1:9000' }]), [
    { targets: ['127.0.0.1:9000'], labels: { namespace: 'switchboard', pod: 'llm-0' } },
  ]);
});

test('the configuration reads targets from a watched file, loads the rule files and scrapes itself', () => {
  const config = prometheusConfig({ dir: '/state', port: 9999, ruleFiles: ['/alerts.yaml'], interval: '2s' });
  assert.deepEqual(config, {
    global: { scrape_interval: '2s', evaluation_interval: '2s' },
    rule_files: ['/alerts.yaml'],
    scrape_configs: [
      {
        job_name: 'switchboard',
        file_sd_configs: [{ files: ['/state/targets.json'], refresh_interval: '5s' }],
      },
      {
        job_name: 'prometheus',
        static_configs: [
          { targets: ['127.0.0.1:9999'], labels: { namespace: 'switchboard', pod: 'prometheus-0' } },
        ],
      },
    ],
  });
});

/** A `/metrics` endpoint serving one gauge named after `name`. */
async function metricsServer(name: string): Promise<{ address: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(`# TYPE ${name} gauge\n${name} 1\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { address: `127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function query(url: string, promql: string): Promise<{ metric: Record<string, string> }[]> {
  const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await res.json()) as { data: { result: { metric: Record<string, string> }[] } };
  return body.data.result;
}

async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    assert.ok(Date.now() < deadline, `${what} within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

test(
  'a Prometheus of its own scrapes the targets it is given, and picks up new ones without a restart',
  { timeout: 90_000 },
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-prometheus-'));
    const first = await metricsServer('first_process_up');
    const second = await metricsServer('second_process_up');
    const prometheus = await startPrometheus({
      dir,
      interval: '1s',
      targets: [{ pod: 'first-0', address: first.address }],
    });
    t.after(async () => {
      await prometheus.stop();
      first.server.close();
      second.server.close();
      await rm(dir, { recursive: true, force: true });
    });
    assert.match(prometheus.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(new URL(prometheus.url).port, '9090', 'never the system Prometheus port');

    const [sample] = await eventually('the first target scraped', async () => {
      const result = await query(prometheus.url, 'first_process_up');
      return result.length > 0 ? result : undefined;
    });
    assert.equal(sample?.metric.namespace, 'switchboard');
    assert.equal(sample?.metric.pod, 'first-0');

    await prometheus.setTargets([
      { pod: 'first-0', address: first.address },
      { pod: 'second-0', address: second.address },
    ]);
    const [added] = await eventually('the added target scraped', async () => {
      const result = await query(prometheus.url, 'second_process_up');
      return result.length > 0 ? result : undefined;
    });
    assert.equal(added?.metric.pod, 'second-0');
    // Prometheus scrapes itself under the same labels.
    assert.ok((await query(prometheus.url, 'up{pod="prometheus-0",namespace="switchboard"}')).length > 0);
  },
);
