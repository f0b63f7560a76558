// The README's webhook receiver, run as it is written: its code block is taken from the README,
// started with node (its `standardwebhooks` import resolves to the official package), and given a
// real delivery from a real sender. It must accept it and print the event; a forged request must
// get its 400. A README edit that breaks the example fails here.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort } from '@switchboard/devcluster';
import { createKey } from '../support/admin.js';
import { startStack, type Stack } from '../support/stack.js';
import { registerEndpoint, sendTestEvent, startSender, webhookSettings } from '../support/webhooks.js';
import type { WorkerProcess } from '../support/worker.js';

const testRoot = fileURLToPath(new URL('../../', import.meta.url));
const repoRoot = join(testRoot, '..');

/** The README's receiver: the first js block after the sentence that introduces it. */
async function readmeReceiver(): Promise<string> {
  const readme = await readFile(join(repoRoot, 'README.md'), 'utf8');
  const intro = readme.indexOf('A receiver in Node');
  assert.ok(intro > 0, 'the README introduces a receiver in Node');
  const block = /```js\n([\s\S]*?)```/.exec(readme.slice(intro));
  assert.ok(block?.[1], 'the README has the receiver code block');
  return block[1];
}

let stack: Stack;
let sender: WorkerProcess;
let receiver: ChildProcess | undefined;
let folder: string;
let output = '';

before(async () => {
  const port = await freePort();
  const settings = await webhookSettings({ allowedHosts: `127.0.0.1:${port}` });
  stack = await startStack({ env: settings.gatewayEnv });
  sender = await startSender(stack.nats, settings);

  const key = await createKey(stack.gateway, { tier: 'basic' });
  const endpoint = await registerEndpoint(stack.gateway, key.key, { url: `http://127.0.0.1:${port}/` });

  const code = await readmeReceiver();
  assert.match(code, /\.listen\(9000\)/, 'the example listens on 9000, as the README says');
  // Inside test/, so that `standardwebhooks` resolves to the test package's copy of it.
  folder = await mkdtemp(join(testRoot, 'dist', 'readme-receiver-'));
  const file = join(folder, 'receiver.mjs');
  await writeFile(file, code.replace('.listen(9000)', `.listen(${port}, '127.0.0.1')`));
  receiver = spawn(process.execPath, [file], {
    env: { PATH: process.env.PATH ?? '', WEBHOOK_SECRET: endpoint.secret },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  receiver.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  await waitFor(
    async () => (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST' }).catch(() => null)) !== null,
  );

  // A forged request: signed with some other secret.
  const forged = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: {
      'webhook-id': 'evt_forged',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': 'v1,' + Buffer.alloc(32).toString('base64'),
    },
    body: JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: {} }),
  });
  forgedStatus = forged.status;

  await sendTestEvent(stack.gateway, key.key, endpoint.id);
});

let forgedStatus = 0;

after(async () => {
  if (receiver && receiver.exitCode === null) {
    receiver.kill();
    await once(receiver, 'exit');
  }
  await sender?.stop();
  await stack?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

async function waitFor(check: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms; receiver printed: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('the README receiver verifies a real delivery with the official library and handles it', async () => {
  await waitFor(() => output.includes('webhook.test'));
  assert.match(output, /^webhook\.test /m);
});

test('the README receiver refuses a forged request with 400', () => {
  assert.equal(forgedStatus, 400);
  assert.doesNotMatch(output, /evt_forged/);
});
