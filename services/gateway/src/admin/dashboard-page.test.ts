import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertSelfContainedPage,
  runPage,
  type FakeElement,
  type FetchCall,
  type FakeResponseInit,
  type PageRun,
} from '../openapi/page-test-support.js';
import { dashboardPage } from './dashboard-page.js';

const nonce = 'ZGFzaGJvYXJkLW5vbmNl';
const TOKEN_KEY = 'switchboard.adminToken';

const key = (id: string, name: string, extra: Record<string, unknown> = {}) => ({
  id,
  name,
  tier: 'basic',
  ip_allowlist: [],
  rate_limit_per_minute: null,
  created_at: '2025-01-01T00:00:00.000Z',
  prefix: `sb_${id}_`,
  last_used_at: null,
  status: 'active',
  ...extra,
});

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

/** A row of GET /admin/api/jobs (and of the status call's `animation_jobs`). */
const job = (id: string, extra: Record<string, unknown>) => ({
  job_id: id,
  key_id: 'k1',
  backend: 'portrait',
  status: 'queued',
  progress: 0,
  attempts: 0,
  created_at: ago(1000),
  updated_at: ago(500),
  result: null,
  error: null,
  ...extra,
});

const clusterStatus = () => ({
  workers: [
    { name: 'llm', address: 'llm:50051', status: 'SERVING' },
    { name: 'browser', address: 'browser:50051', status: 'UNREACHABLE' },
  ],
  browser_sessions: null,
  animation_jobs: [
    job('job-1', { status: 'running', progress: 0.25, attempts: 2, created_at: ago(12_400) }),
    job('job-2', {
      key_id: 'k2',
      backend: 'video-diffusion',
      status: 'succeeded',
      progress: 1,
      attempts: 1,
      created_at: ago(3 * 60_000 + 5_000),
    }),
    job('job-3', { key_id: 'k2', backend: 'avatar', created_at: ago(2 * 3_600_000 + 60_000) }),
  ],
});

type Handler = (call: FetchCall) => FakeResponseInit | undefined;

/** A fake admin API: `token` is accepted; `extra` answers first when it returns something. */
function start(
  options: {
    storage?: Record<string, string>;
    extra?: Handler;
    confirm?: (m: string) => boolean;
    prompt?: (m: string, v: string) => string | null;
    clipboard?: string[];
  } = {},
): PageRun {
  const keys = [
    key('k1', 'first'),
    key('k2', '<script>alert(1)</script>', {
      status: 'revoked',
      ip_allowlist: ['10.0.0.0/8'],
      rate_limit_per_minute: 30,
    }),
  ];
  return runPage(dashboardPage(nonce), {
    ...options,
    respond(call) {
      if (call.headers.authorization !== 'Bearer token')
        return {
          status: 401,
          body: { error: { code: 'unauthorized', message: 'A valid admin token is required.' } },
        };
      const answer = options.extra?.(call);
      if (answer) return answer;
      if (call.method === 'GET' && call.url === '/admin/api/keys')
        return { status: 200, body: { data: keys } };
      if (call.method === 'GET' && call.url === '/admin/api/status')
        return { status: 200, body: clusterStatus() };
      return {
        status: 404,
        body: { error: { code: 'not_found', message: `no route ${call.method} ${call.url}` } },
      };
    },
  });
}

async function signIn(run: PageRun, token = 'token'): Promise<void> {
  run.byId('token').value = token;
  const event = run.byId('login-form').dispatch('submit');
  assert.ok(event.defaultPrevented, 'the form is not submitted to the server');
  await run.settle();
}

const buttons = (root: FakeElement, label: string) =>
  root.findAll((e) => e.tagName === 'BUTTON' && e.textContent === label);

test('the page is self-contained, nonced, and its script parses', () => {
  const html = dashboardPage(nonce);
  assertSelfContainedPage(html, nonce);
  assert.doesNotMatch(html, /localStorage|document\.cookie/, 'the token lives in sessionStorage only');
  assert.throws(() => dashboardPage('bad nonce"'), /nonce/);
});

test('asks for the token first and calls nothing without it', async () => {
  const run = start();
  await run.settle();
  assert.equal(run.calls.length, 0);
  assert.equal(run.byId('login').hidden, false);
  assert.equal(run.byId('app').hidden, true);
});

test('a refused token stays out of storage and the message is shown', async () => {
  const run = start();
  await signIn(run, 'wrong');
  assert.equal(run.calls[0]?.headers.authorization, 'Bearer wrong');
  assert.equal(run.storage.has(TOKEN_KEY), false);
  assert.equal(run.byId('app').hidden, true);
  assert.match(run.byId('login-error').textContent, /refused/);
});

test('signs in with a bearer token kept in sessionStorage, lists keys and polls the status every 5 s', async () => {
  const run = start();
  await signIn(run);
  assert.equal(run.storage.get(TOKEN_KEY), 'token');
  assert.equal(run.byId('app').hidden, false);
  assert.ok(run.calls.every((c) => c.headers.authorization === 'Bearer token'));
  assert.deepEqual(
    run.calls.map((c) => `${c.method} ${c.url}`),
    ['GET /admin/api/keys', 'GET /admin/api/status'],
  );

  const rows = run.byId('keys').findAll((e) => e.tagName === 'TR');
  assert.equal(rows.length, 2);
  assert.ok(
    rows[0]!.textContent.includes('first') &&
      rows[0]!.textContent.includes('everyone') &&
      rows[0]!.textContent.includes('tier default'),
  );
  assert.ok(rows[1]!.textContent.includes('<script>alert(1)</script>'), 'names are shown as text');
  assert.ok(!run.document.body.findAll((e) => e.tagName === 'SCRIPT').length);
  assert.ok(
    rows[1]!.textContent.includes('10.0.0.0/8') &&
      rows[1]!.textContent.includes('30') &&
      rows[1]!.textContent.includes('revoked'),
  );
  assert.ok(buttons(rows[1]!, 'Revoke')[0]!.disabled, 'a revoked key has no actions');

  assert.ok(
    run.byId('workers').textContent.includes('SERVING') &&
      run.byId('workers').textContent.includes('UNREACHABLE'),
  );
  assert.match(run.byId('sessions').textContent, /unavailable/);
  assert.ok(run.byId('jobs').textContent.includes('job-1') && run.byId('jobs').textContent.includes('25%'));

  const timers = [...run.intervals.values()];
  assert.equal(timers.length, 1);
  assert.equal(timers[0]!.ms, 5000);
  timers[0]!.fn();
  await run.settle();
  assert.equal(run.calls.filter((c) => c.url === '/admin/api/status').length, 2);

  run.byId('signout').click();
  assert.equal(run.storage.has(TOKEN_KEY), false);
  assert.equal(run.intervals.size, 0, 'polling stops on sign-out');
  assert.equal(run.byId('login').hidden, false);
});

test('a token saved in this tab signs in on load', async () => {
  const run = start({ storage: { [TOKEN_KEY]: 'token' } });
  await run.settle();
  assert.equal(run.byId('app').hidden, false);
  assert.equal(run.byId('keys').findAll((e) => e.tagName === 'TR').length, 2);
});

test('creates a key and shows its secret once, with a copy button', async () => {
  const clipboard: string[] = [];
  const run = start({
    clipboard,
    extra: (call) =>
      call.method === 'POST' && call.url === '/admin/api/keys'
        ? { status: 201, body: { ...key('k3', 'new'), key: 'sb_k3_secret' } }
        : undefined,
  });
  await signIn(run);
  run.byId('create-name').value = ' new ';
  run.byId('create-tier').value = 'professional';
  run.byId('create-allowlist').value = '10.0.0.0/8, 2001:db8::/32';
  run.byId('create-limit').value = '120';
  assert.ok(run.byId('create-form').dispatch('submit').defaultPrevented);
  await run.settle();
  const post = run.calls.find((c) => c.method === 'POST');
  assert.deepEqual(post?.body, {
    name: 'new',
    tier: 'professional',
    ip_allowlist: ['10.0.0.0/8', '2001:db8::/32'],
    rate_limit_per_minute: 120,
  });
  assert.equal(run.byId('secret').hidden, false);
  assert.equal(run.byId('secret-value').value, 'sb_k3_secret');
  run.byId('copy').click();
  await run.settle();
  assert.deepEqual(clipboard, ['sb_k3_secret']);
  assert.equal(run.byId('copy').textContent, 'Copied');
  run.byId('secret-done').click();
  assert.equal(run.byId('secret').hidden, true);
  assert.equal(run.byId('secret-value').value, '', 'the secret does not linger in the page');
  assert.equal(
    run.calls.filter((c) => c.method === 'GET' && c.url === '/admin/api/keys').length,
    2,
    'the list is reloaded',
  );
});

test('optional create fields are left out, and API errors show their message', async () => {
  const run = start({
    extra: (call) =>
      call.method === 'POST'
        ? {
            status: 400,
            body: {
              error: {
                code: 'invalid_request',
                message: 'tier must be one of basic, professional, enterprise.',
                request_id: 'r',
              },
            },
          }
        : undefined,
  });
  await signIn(run);
  run.byId('create-name').value = 'n';
  run.byId('create-tier').value = 'gold';
  run.byId('create-form').dispatch('submit');
  await run.settle();
  assert.deepEqual(run.calls.find((c) => c.method === 'POST')?.body, { name: 'n', tier: 'gold' });
  assert.equal(run.byId('notice').hidden, false);
  assert.equal(run.byId('notice').textContent, 'tier must be one of basic, professional, enterprise.');
  assert.equal(run.byId('secret').hidden, true);
});

test('edits a key with PATCH; an empty limit clears the override', async () => {
  const run = start({
    extra: (call) =>
      call.method === 'PATCH'
        ? { status: 200, body: key('k1', 'renamed', { tier: 'enterprise' }) }
        : undefined,
  });
  await signIn(run);
  buttons(run.byId('keys'), 'Edit')[0]!.click();
  assert.equal(run.byId('edit-card').hidden, false);
  assert.equal(run.byId('edit-name').value, 'first');
  assert.equal(run.byId('edit-tier').value, 'basic');
  run.byId('edit-name').value = 'renamed';
  run.byId('edit-tier').value = 'enterprise';
  run.byId('edit-allowlist').value = '192.168.0.0/16\n10.1.2.3';
  run.byId('edit-limit').value = '';
  run.byId('edit-form').dispatch('submit');
  await run.settle();
  const patch = run.calls.find((c) => c.method === 'PATCH');
  assert.equal(patch?.url, '/admin/api/keys/k1');
  assert.deepEqual(patch?.body, {
    name: 'renamed',
    tier: 'enterprise',
    ip_allowlist: ['192.168.0.0/16', '10.1.2.3'],
    rate_limit_per_minute: null,
  });
  assert.equal(run.byId('edit-card').hidden, true);
  assert.match(run.byId('notice').textContent, /Saved/);
});

test('rotates with a grace period and shows the new key once', async () => {
  const prompts: string[] = [];
  const run = start({
    prompt: (message) => (prompts.push(message), '3600'),
    extra: (call) =>
      call.url === '/admin/api/keys/k1/rotate'
        ? { status: 200, body: { id: 'k1', key: 'sb_k1_new' } }
        : undefined,
  });
  await signIn(run);
  buttons(run.byId('keys'), 'Rotate')[0]!.click();
  await run.settle();
  assert.equal(prompts.length, 1);
  assert.deepEqual(run.calls.find((c) => c.method === 'POST')?.body, { grace_seconds: 3600 });
  assert.equal(run.byId('secret-value').value, 'sb_k1_new');
  assert.match(run.byId('secret-title').textContent, /3600 s/);
});

test('revokes only after confirm()', async () => {
  let answer = false;
  const run = start({
    confirm: () => answer,
    extra: (call) => (call.method === 'DELETE' ? { status: 204 } : undefined),
  });
  await signIn(run);
  buttons(run.byId('keys'), 'Revoke')[0]!.click();
  await run.settle();
  assert.equal(
    run.calls.some((c) => c.method === 'DELETE'),
    false,
  );
  answer = true;
  buttons(run.byId('keys'), 'Revoke')[0]!.click();
  await run.settle();
  assert.equal(run.calls.find((c) => c.method === 'DELETE')?.url, '/admin/api/keys/k1');
  assert.match(run.byId('notice').textContent, /Revoked "first"/);
});

test('a token refused later (rotated admin token) signs out', async () => {
  let refuse = false;
  const run = start({
    extra: () =>
      refuse
        ? {
            status: 401,
            body: { error: { code: 'unauthorized', message: 'A valid admin token is required.' } },
          }
        : undefined,
  });
  await signIn(run);
  refuse = true;
  run.byId('refresh-keys').click();
  await run.settle();
  assert.equal(run.byId('login').hidden, false);
  assert.equal(run.storage.has(TOKEN_KEY), false);
  assert.match(run.byId('login-error').textContent, /A valid admin token is required/);
});

const cells = (row: FakeElement) => row.findAll((e) => e.tagName === 'TD').map((td) => td.textContent);

test('animation jobs of every key show owner, back-end, status, progress, age and attempts', async () => {
  const run = start();
  await signIn(run);
  const head = run
    .byId('jobs')
    .findAll((e) => e.tagName === 'TH')
    .map((th) => th.textContent);
  assert.deepEqual(head, ['job', 'owner key', 'backend', 'status', 'progress', 'age', 'attempts', '']);
  const rows = run.byId('jobs').findAll((e) => e.tagName === 'TR' && e.parentNode?.tagName === 'TBODY');
  assert.deepEqual(rows.map(cells), [
    ['job-1', 'k1', 'portrait', 'running', ' 25%', '12 s', '2', 'Cancel'],
    ['job-2', 'k2', 'video-diffusion', 'succeeded', ' 100%', '3 min', '1', ''],
    ['job-3', 'k2', 'avatar', 'queued', ' 0%', '2 h', '0', 'Cancel'],
  ]);
  assert.equal(buttons(rows[1]!, 'Cancel').length, 0, 'a finished job cannot be canceled');
});

test('cancels a queued or running job with the admin token after confirm(), then refreshes', async () => {
  let answer = false;
  const confirms: string[] = [];
  const run = start({
    confirm: (message) => (confirms.push(message), answer),
    extra: (call) =>
      call.method === 'DELETE' && call.url === '/admin/api/jobs/job-3'
        ? { status: 200, body: job('job-3', { status: 'canceled' }) }
        : undefined,
  });
  await signIn(run);
  const cancel = () => buttons(run.byId('jobs'), 'Cancel');
  cancel()[1]!.click();
  await run.settle();
  assert.equal(confirms.length, 1);
  assert.match(confirms[0]!, /job-3/);
  assert.equal(run.calls.filter((c) => c.method === 'DELETE').length, 0, 'nothing without confirm()');

  answer = true;
  const polls = run.calls.filter((c) => c.url === '/admin/api/status').length;
  cancel()[1]!.click();
  await run.settle();
  const deletes = run.calls.filter((c) => c.method === 'DELETE');
  assert.deepEqual(
    deletes.map((c) => [c.url, c.headers.authorization]),
    [['/admin/api/jobs/job-3', 'Bearer token']],
  );
  assert.match(run.byId('notice').textContent, /Canceled job job-3/);
  assert.equal(
    run.calls.filter((c) => c.url === '/admin/api/status').length,
    polls + 1,
    'the jobs are reloaded',
  );
});

test('a job that finished meanwhile: the 409 message is shown and the list reloaded', async () => {
  const run = start({
    extra: (call) =>
      call.method === 'DELETE'
        ? {
            status: 409,
            body: {
              error: { code: 'job_finished', message: 'The job has already succeeded.', request_id: 'r' },
            },
          }
        : undefined,
  });
  await signIn(run);
  const polls = run.calls.filter((c) => c.url === '/admin/api/status').length;
  buttons(run.byId('jobs'), 'Cancel')[0]!.click();
  await run.settle();
  assert.equal(run.calls.find((c) => c.method === 'DELETE')?.url, '/admin/api/jobs/job-1');
  assert.equal(run.byId('notice').textContent, 'The job has already succeeded.');
  assert.equal(run.calls.filter((c) => c.url === '/admin/api/status').length, polls + 1);
});

test('jobs that cannot be read are shown as unavailable', async () => {
  const run = start({
    extra: (call) =>
      call.url === '/admin/api/status'
        ? { status: 200, body: { ...clusterStatus(), animation_jobs: null } }
        : undefined,
  });
  await signIn(run);
  assert.match(run.byId('jobs').textContent, /unavailable/);
  assert.equal(buttons(run.byId('jobs'), 'Cancel').length, 0);
});
