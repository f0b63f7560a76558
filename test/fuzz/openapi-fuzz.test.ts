import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { freePort, startCluster, type Cluster } from '@switchboard/devcluster';
import { repoRoot } from '../support/gateway.js';
import { AnswerChecks, preview } from '../support/openapi-fuzz/answers.js';
import {
  isUpgrade,
  operationsOf,
  requestsFor,
  type KnownIds,
  type Operation,
} from '../support/openapi-fuzz/requests.js';
import { SchemaValues } from '../support/openapi-fuzz/schema-values.js';
import { send, type FuzzRequest } from '../support/openapi-fuzz/send.js';
import { mib, rss } from '../support/resource-census.js';
import { startTestSite, type TestSite } from '../support/test-site.js';
import { localClusterEnv } from '../support/local-cluster-env.js';

// Every operation of the document the gateway serves, driven with requests drawn from its own
// schemas (valid, at the bounds, and each with one thing wrong) against the whole local cluster:
// no answer may be a server error, every error must be one of the table's, every success must
// match its schema, and no process may grow without bound while it takes the abuse.

/** Requests per operation: small here (the file runs in a few minutes), larger under `npm run fuzz`. */
const runs = Number(process.env.FUZZ_RUNS) || 4;
/** Only the operations whose `METHOD /path` contains one of these `|`-separated texts, to replay one. */
const only = (process.env.FUZZ_ONLY ?? '').split('|');
/** Fixed by default, so `npm test` sends the same requests each run; `random` (as `npm run fuzz` sets) explores. */
const seed =
  process.env.FUZZ_SEED === 'random' ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED) || 20_261_128;
/** Long enough for a model call queued behind others on a loaded machine; a hang is still a failure. */
const answerTimeoutMs = 60_000;

let cluster: Cluster;
let site: TestSite;
let stateDir: string;
let document: Record<string, unknown>;
let operations: Operation[];
let checks: AnswerChecks;
let values: SchemaValues;
let apiKey: string;
const known: KnownIds = {};

before(async () => {
  console.log(`openapi fuzz: FUZZ_SEED=${seed} FUZZ_RUNS=${runs}`);
  site = await startTestSite();
  stateDir = mkdtempSync(join(tmpdir(), 'sb-fuzz-'));
  cluster = await startCluster({
    root: repoRoot,
    // Generous: the machine may be shared with other test files while every worker starts.
    readyTimeoutMs: 240_000,
    env: localClusterEnv(stateDir, await freePort(), {
      BROWSER_ALLOWED_HOSTS: site.host,
      WEBHOOK_ALLOWED_HOSTS: site.host,
      SWITCHBOARD_FAKE_AVATAR: '1',
    }),
  });
  document = (await (await fetch(`${cluster.gatewayUrl}/openapi.json`)).json()) as Record<string, unknown>;
  operations = operationsOf(document);
  checks = new AnswerChecks(document);
  values = new SchemaValues(
    (document.components as { schemas: Record<string, Record<string, unknown>> }).schemas,
  );
  apiKey = (await adminCall('POST', '/admin/api/keys', { name: 'fuzz', tier: 'enterprise' })).key as string;
  await seedKnownIds();
});

after(async () => {
  await cluster?.stop();
  await site?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

async function adminCall(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${cluster.gatewayUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${cluster.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${await res.clone().text()}`);
  return (await res.json()) as Record<string, unknown>;
}

async function apiCall(
  method: string,
  path: string,
  body: unknown,
): Promise<Record<string, unknown> | undefined> {
  const res = await fetch(`${cluster.gatewayUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) console.log(`fuzz setup: ${method} ${path} answered ${res.status}: ${await res.text()}`);
  return res.ok ? ((await res.json()) as Record<string, unknown>) : undefined;
}

/**
 * Real ids for the routes that take one, so requests reach past the 404. The admin key routes get
 * a spare key only: the fuzzing key must never be deleted, rotated or restricted by its own run.
 */
async function seedKnownIds(): Promise<void> {
  const spare = await adminCall('POST', '/admin/api/keys', { name: 'fuzz-spare', tier: 'basic' });
  const session = await apiCall('POST', '/api/browser/session/create', {});
  const image = await apiCall('POST', '/generate-image', {
    prompt: 'a kite',
    width: 64,
    height: 64,
    steps: 1,
  });
  const webhook = await apiCall('POST', '/webhooks', {
    url: `http://${site.host}/hook`,
    events: ['animate.job.succeeded'],
  });
  for (const op of operations) {
    const ids: Record<string, string[]> = {};
    if (op.template.startsWith('/admin/api/keys/{id}')) ids.id = [spare.id as string];
    else if (/^\/(api\/browser\/session|admin\/api\/browser\/sessions)\/\{id\}/.test(op.template) && session)
      ids.id = [session.session_id as string];
    else if (op.template.startsWith('/api/images/{id}') && image) ids.id = [image.id as string];
    else if (op.template.startsWith('/webhooks/{id}') && webhook) ids.id = [webhook.id as string];
    if (Object.keys(ids).length) known[op.template] = ids;
  }
}

/** Resident memory of the gateway and each worker process, by name. */
function memory(): Map<string, number> {
  return new Map(
    [...cluster.processes]
      .filter(([name]) => name === 'gateway' || cluster.workers.includes(name))
      .map(([name, proc]) => [name, rss(proc.pid!)]),
  );
}

const describe = (request: FuzzRequest) =>
  `${request.variant}: ${request.method} ${request.path.slice(0, 200)} ${JSON.stringify(request.headers).slice(0, 300)} ${request.body?.toString('utf8').slice(0, 300) ?? ''}`;

async function fuzzOperation(op: Operation, numRuns: number, runSeed: number): Promise<void> {
  const property = fc.asyncProperty(
    requestsFor(op, values, { apiKey, adminToken: cluster.adminToken }, known),
    async (request) => {
      const answer = await send(cluster.gatewayUrl, request, answerTimeoutMs);
      const problems = checks.problems(op, request, answer);
      assert.deepEqual(problems, [], `${describe(request)}\n→ ${answer.status} ${preview(answer.body)}`);
    },
  );
  // No shrinking: every try is a real request to a loaded cluster, and the first case says enough.
  await fc.assert(property, { numRuns, seed: runSeed, endOnFailure: true, includeErrorInReport: true });
}

test(
  'every operation of the served document answers fuzzed requests as the contract says',
  { timeout: 1_200_000 },
  async (t) => {
    const upgrades = operations.filter(isUpgrade);
    const driven = operations.filter(
      (op) => !isUpgrade(op) && only.some((text) => `${op.method} ${op.template}`.includes(text)),
    );
    assert.ok(
      process.env.FUZZ_ONLY || driven.length > 50,
      `the document lists the API's operations: ${driven.length}`,
    );

    // Warm-up: a few requests to every operation loads the code paths and the models' buffers, so
    // the memory measured after it is the process's working level.
    for (const op of driven) await fuzzOperation(op, 1, seed + 1).catch(() => undefined);
    const warm = memory();

    for (const op of driven) {
      // Numbered in the whole document, so a seed replays the same requests under FUZZ_ONLY.
      const index = operations.filter((o) => !isUpgrade(o)).indexOf(op);
      await t.test(`${op.method} ${op.template}`, async () => {
        try {
          await fuzzOperation(op, runs, seed + index);
        } catch (error) {
          throw new Error(
            `FUZZ_SEED=${seed} (operation seed ${seed + index}): ${String((error as Error).message)}`,
          );
        }
      });
    }

    // A leak grows with the requests: hundreds of them, many with bodies up to 200 kB, would carry
    // a per-request leak past twice the working level. The 200 MB margin absorbs a V8 heap that
    // grows before it collects and allocator arenas that keep freed pages, which are not leaks.
    const afterFuzz = memory();
    for (const [name, before] of warm) {
      const now = afterFuzz.get(name)!;
      assert.ok(Number.isFinite(now), `${name} is still running after the fuzzing`);
      assert.ok(
        now < 2 * before + 200 * 2 ** 20,
        `${name}: RSS ${mib(before)} MiB after warm-up, ${mib(now)} MiB after fuzzing`,
      );
    }

    // WebSocket routes are not fuzzed (an upgraded connection is outside request/answer checks):
    // asked to upgrade for a session or link that does not exist, each answers a clean 4xx instead.
    for (const op of upgrades) {
      const path = op.template.replace(/\{[^}]+\}/g, 'no-such-id');
      const answer = await send(
        cluster.gatewayUrl,
        {
          method: 'GET',
          path,
          variant: 'upgrade',
          headers: {
            authorization: `Bearer ${apiKey}`,
            connection: 'Upgrade',
            upgrade: 'websocket',
            'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
            'sec-websocket-version': '13',
          },
        },
        answerTimeoutMs,
      );
      assert.ok(
        answer.status >= 400 && answer.status < 500,
        `${path}: ${answer.status} ${preview(answer.body)}`,
      );
      assert.deepEqual(
        checks.problems(op, { method: 'GET', path, headers: {}, variant: 'upgrade' }, answer),
        [],
      );
    }
  },
);
