import assert from 'node:assert/strict';
import { chmod, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bearer, createKey } from '../support/admin.js';
import { chromiumPids, startBrowserStack, type BrowserStack } from '../support/browser-stack.js';
import { sleep } from '../support/stack.js';
import { startWorker } from '../support/worker.js';

/**
 * What a tenant who takes over a renderer (or any Chromium process) of the browser worker finds:
 * no secret of the worker in any Chromium process's environment, renderers locked down by
 * Chromium's sandbox (seccomp-bpf, a user namespace of their own), and, with the worker running
 * as root (as here and in CI), every Chromium process under an unprivileged uid. A worker whose
 * Chromium cannot be sandboxed refuses to start unless the operator opts out.
 */

const runAsRoot = process.getuid?.() === 0;

/** Secrets a worker could hold besides its cluster secret; none may reach Chromium. */
const planted = {
  AVATAR_API_KEY: 'avatar-live-key-7f3a9c2e51d84b06',
  ADMIN_TOKEN: 'admin-token-c41e9b7d2f6a0835',
  AWS_SECRET_ACCESS_KEY: 'aws-secret-wJalrXUtnFEMIK7MDENGbPxRfiCY',
};
/** What a Chromium process may take from the worker's environment (childProcessEnv + HOME). */
const passedOn = new Set(['PATH', 'LANG', 'LC_ALL', 'TZ', 'HOME']);
const secretName = /SECRET|TOKEN|KEY|PASSWORD|_URL$/;

interface Proc {
  pid: number;
  ppid: number;
  cmdline: string;
  environ: string;
  status: string;
  /** Its user namespace (`/proc/<pid>/ns/user`), read with the rest: a spare renderer may be gone later. */
  userNs: string;
}

async function readProc(pid: number): Promise<Proc | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return {
      pid,
      // `pid (comm) state ppid …`, where comm may hold spaces and parentheses.
      ppid: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]),
      cmdline: await readFile(`/proc/${pid}/cmdline`, 'utf8'),
      environ: await readFile(`/proc/${pid}/environ`, 'utf8'),
      status: await readFile(`/proc/${pid}/status`, 'utf8'),
      userNs: await readlink(`/proc/${pid}/ns/user`),
    };
  } catch {
    return undefined; // gone meanwhile
  }
}

/** Every process descended from `root` (Chromium's browser, zygotes, renderers, GPU, utilities). */
async function descendants(root: number): Promise<Proc[]> {
  const all = (
    await Promise.all((await readdir('/proc')).filter((e) => /^\d+$/.test(e)).map((e) => readProc(Number(e))))
  ).filter((p): p is Proc => p !== undefined);
  const found: Proc[] = [];
  const parents = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid);
        found.push(p);
        grew = true;
      }
    }
  }
  return found;
}

const field = (status: string, name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)?.[1] ?? '';
const uids = (p: Proc) => field(p.status, 'Uid').split(/\s+/).map(Number);
/** Arguments; Chromium's zygote children rewrite their cmdline as one space-separated string. */
const args = (p: Proc) => p.cmdline.split(/[\0 ]/);
const typeOf = (p: Proc) =>
  args(p)
    .find((a) => a.startsWith('--type='))
    ?.slice('--type='.length);
const isRenderer = (p: Proc) => typeOf(p) === 'renderer';
const isBrowser = (p: Proc) => typeOf(p) === undefined;
const profileOf = (p: Proc) =>
  args(p)
    .find((a) => a.startsWith('--user-data-dir='))
    ?.slice('--user-data-dir='.length);
const environNames = (p: Proc) => p.environ.split('\0').map((entry) => entry.split('=')[0] ?? '');

function parseEnviron(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split('\0')
      .filter(Boolean)
      .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  );
}

describe("a tenant's Chromium holds no secret and runs sandboxed", { timeout: 240_000 }, () => {
  let stack: BrowserStack;

  before(async () => {
    stack = await startBrowserStack({ workerEnv: planted });
  });
  after(async () => stack?.stop());

  it("every Chromium process of a session: no secret in its environment, no --no-sandbox, renderers under seccomp-bpf in their own user namespace, not the worker's uid", async () => {
    const key = await createKey(stack.gateway, { tier: 'professional' });
    const post = (path: string, body: unknown = {}) =>
      fetch(`${stack.gateway.url}/api/browser${path}`, {
        method: 'POST',
        headers: { ...bearer(key.key), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const created = await post('/session/create');
    assert.equal(created.status, 201, await created.clone().text());
    const id = ((await created.json()) as { session_id: string }).session_id;
    const navigated = await post(`/session/${id}/navigate`, { url: `${stack.site.origin}/form` });
    assert.equal(navigated.status, 200, await navigated.clone().text());
    const captured = await post(`/session/${id}/capture`);
    assert.equal(captured.status, 200, await captured.clone().text());

    // The worker's own environment: what a leak would carry (read, like Chromium's, from /proc).
    const workerPid = stack.workers[0]!.child.pid!;
    const workerEnv = parseEnviron(await readFile(`/proc/${workerPid}/environ`, 'utf8'));
    for (const [name, value] of Object.entries(planted)) assert.equal(workerEnv[name], value, name);
    assert.ok(workerEnv.CLUSTER_SECRET, 'the worker holds the cluster secret');
    const forbiddenNames = Object.keys(workerEnv).filter((name) => !passedOn.has(name));
    const secretValues = Object.entries(workerEnv)
      .filter(([name, value]) => secretName.test(name) && value.length >= 8)
      .map(([name, value]) => ({ name, value }));
    assert.ok(secretValues.length >= 5, `secrets to look for: ${secretValues.map((s) => s.name).join(', ')}`);

    // Renderers engage seccomp a moment after they start; a spare one may be starting just now.
    let procs: Proc[] = [];
    for (const end = Date.now() + 10_000; Date.now() < end; await sleep(100)) {
      procs = await descendants(workerPid);
      if (procs.filter(isRenderer).every((p) => field(p.status, 'Seccomp') === '2')) break;
    }
    const browsers = procs.filter(isBrowser);
    const renderers = procs.filter(isRenderer);
    // The session's browser and the pool's warm one, each with its renderers and helpers.
    assert.ok(browsers.length >= 2, `browser processes: ${browsers.length}`);
    assert.ok(renderers.length >= 2, `renderer processes: ${renderers.length}`);
    assert.ok(procs.length > browsers.length + renderers.length, 'zygotes, GPU and utility processes too');
    const stackPids = await chromiumPids(stack.profileRoot);
    for (const p of procs) {
      // A spare renderer may exit between the two reads; every process still running is found.
      if (!stackPids.includes(p.pid) && (await readProc(p.pid)) === undefined) continue;
      assert.ok(stackPids.includes(p.pid), `pid ${p.pid} is one of the stack's Chromiums`);
    }

    for (const p of procs) {
      const what = `pid ${p.pid} (${typeOf(p) ?? 'browser'})`;
      const haystack = `${p.environ}\n${p.cmdline}`;
      for (const { name, value } of secretValues) {
        assert.ok(!haystack.includes(value), `${what} holds the value of ${name}`);
      }
      const names = environNames(p).filter((n) => forbiddenNames.includes(n));
      assert.deepEqual(names, [], `${what} got the worker's variables`);
      assert.ok(!args(p).includes('--no-sandbox'), `${what} runs with --no-sandbox`);
      if (runAsRoot) {
        assert.ok(
          uids(p).every((uid) => uid !== 0),
          `${what} runs as root: Uid ${field(p.status, 'Uid')}`,
        );
        assert.ok(!field(p.status, 'Groups').split(/\s+/).includes('0'), `${what} keeps root's group`);
      } else {
        assert.equal(uids(p)[0], process.getuid?.(), `${what} runs as the worker's user`);
      }
    }
    for (const browser of browsers) {
      assert.ok(
        profileOf(browser)?.startsWith(stack.profileRoot),
        `browser ${browser.pid} has its own profile`,
      );
      assert.equal(parseEnviron(browser.environ).HOME, profileOf(browser), "HOME is the browser's profile");
    }
    for (const renderer of renderers) {
      assert.equal(field(renderer.status, 'Seccomp'), '2', `renderer ${renderer.pid} under seccomp-bpf`);
      if (runAsRoot) {
        const browser = browsers.find((b) => profileOf(b) === profileOf(renderer));
        assert.ok(browser, `renderer ${renderer.pid} belongs to a browser`);
        assert.notEqual(
          renderer.userNs,
          browser.userNs,
          `renderer ${renderer.pid} in a user namespace of its own`,
        );
      }
    }
    assert.equal((await post(`/session/${id}/close`)).status, 200);
  });
});

describe(
  'a worker whose Chromium cannot be sandboxed refuses to start, unless the operator opts out',
  { timeout: 240_000 },
  () => {
    let work: string;

    before(async () => {
      work = await mkdtemp(join(tmpdir(), 'sb-isolation-'));
      await chmod(work, 0o755);
    });
    after(async () => rm(work, { recursive: true, force: true }));

    it("refuses when Chromium's renderers run without seccomp-bpf, naming the opt-out", async () => {
      // A Chromium that starts and renders, but unsandboxed: the probe must look, not trust.
      const unsandboxed = join(work, 'chromium-unsandboxed');
      await writeFile(unsandboxed, '#!/bin/sh\nexec /usr/bin/chromium --no-sandbox "$@"\n', { mode: 0o755 });
      await assert.rejects(
        startWorker('browser', { env: { CHROMIUM_PATH: unsandboxed, BROWSER_PROFILE_ROOT: work } }),
        (error: Error) => {
          assert.match(error.message, /exited during start-up/);
          assert.match(
            error.message,
            /Chromium's sandbox does not work here \(no renderer ran under seccomp-bpf/,
          );
          assert.match(error.message, /BROWSER_CHROMIUM_SANDBOX=false/);
          return true;
        },
      );
      assert.deepEqual(await readdir(work), ['chromium-unsandboxed'], 'the probe left no profile behind');
    });

    it(
      'refuses when the worker is root and would run Chromium as root',
      { skip: !runAsRoot && 'needs root' },
      async () => {
        await assert.rejects(
          startWorker('browser', { env: { BROWSER_CHROMIUM_USER: 'root', BROWSER_PROFILE_ROOT: work } }),
          (error: Error) => {
            assert.match(error.message, /Running as root without --no-sandbox is not supported/);
            assert.match(error.message, /BROWSER_CHROMIUM_SANDBOX=false/);
            return true;
          },
        );
      },
    );

    it(
      'refuses when the worker is root and the Chromium user does not exist',
      { skip: !runAsRoot && 'needs root' },
      async () => {
        await assert.rejects(
          startWorker('browser', { env: { BROWSER_CHROMIUM_USER: 'sb-no-such-user' } }),
          /BROWSER_CHROMIUM_USER=sb-no-such-user, but there is no such user/,
        );
      },
    );

    it('with BROWSER_CHROMIUM_SANDBOX=false it starts, warns, and launches Chromium with --no-sandbox', async () => {
      const unsafe = await startBrowserStack({
        workerEnv: {
          BROWSER_CHROMIUM_SANDBOX: 'false',
          ...(runAsRoot ? { BROWSER_CHROMIUM_USER: 'root' } : {}),
        },
      });
      try {
        const worker = unsafe.workers[0]!;
        assert.match(
          worker.output(),
          /"level":40[^\n]*Chromium's sandbox is OFF \(BROWSER_CHROMIUM_SANDBOX=false\)/,
        );
        const browsers = (await descendants(worker.child.pid!)).filter(isBrowser);
        assert.ok(browsers.length > 0, 'the warm Chromium runs');
        for (const b of browsers)
          assert.ok(args(b).includes('--no-sandbox'), `browser ${b.pid}: --no-sandbox`);
      } finally {
        await unsafe.stop();
      }
    });
  },
);
