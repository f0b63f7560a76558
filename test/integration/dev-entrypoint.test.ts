import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@switchboard/devcluster';
import { repoRoot } from '../support/helm.js';

/**
 * The development image's command (deploy/docker/dev-entrypoint.mjs), in a workspace laid out as
 * the image's /src: a source file written where skaffold's sync writes it is compiled by the
 * watching tsc and served by the restarted process, with no image build; SIGTERM stops both.
 */

const serviceSource = (version: string) => `import { createServer } from 'node:http';
const server = createServer((_req, res) => res.end('${version}'));
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

async function answer(port: number): Promise<string | undefined> {
  try {
    return await (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1_000) })).text();
  } catch {
    return undefined;
  }
}

async function until(port: number, expected: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: string | undefined;
  while (Date.now() < deadline) {
    last = await answer(port);
    if (last === expected) return;
    await sleep(200);
  }
  assert.fail(`the service answered ${JSON.stringify(last)}, not ${JSON.stringify(expected)}`);
}

describe('dev image entrypoint: tsc --watch beside node --watch', () => {
  let workspace: string;
  before(() => {
    workspace = mkdtempSync(join(tmpdir(), 'sb-dev-entrypoint-'));
    mkdirSync(join(workspace, 'deploy', 'docker'), { recursive: true });
    copyFileSync(
      join(repoRoot, 'deploy', 'docker', 'dev-entrypoint.mjs'),
      join(workspace, 'deploy', 'docker', 'dev-entrypoint.mjs'),
    );
    mkdirSync(join(workspace, 'node_modules'));
    symlinkSync(join(repoRoot, 'node_modules', 'typescript'), join(workspace, 'node_modules', 'typescript'));
    const service = join(workspace, 'services', 'demo');
    mkdirSync(join(service, 'src'), { recursive: true });
    writeFileSync(join(service, 'package.json'), '{"type":"module"}');
    writeFileSync(
      join(service, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          target: 'es2022',
          rootDir: 'src',
          outDir: 'dist',
          composite: true,
          types: [],
          skipLibCheck: true,
        },
        include: ['src'],
      }),
    );
    // Node's own types are not in this bare workspace: declare the little the service uses.
    writeFileSync(
      join(service, 'src', 'node.d.ts'),
      `declare module 'node:http' { export function createServer(h: (req: unknown, res: { end(b: string): void }) => void): { listen(p: number, h: string): void; close(cb: () => void): void }; }
declare const process: { env: Record<string, string | undefined>; on(s: string, f: () => void): void; exit(c: number): never };
`,
    );
    writeFileSync(join(service, 'src', 'main.ts'), serviceSource('v1'));
    // The image's build stage compiled the workspace before the entrypoint ever runs.
    const built = spawnSync(process.execPath, [
      join(workspace, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-b',
      service,
    ]);
    assert.equal(built.status, 0, built.stdout.toString());
  });
  after(() => rmSync(workspace, { recursive: true, force: true }));

  test('an edited source file is compiled and served without a restart of the container; SIGTERM stops both', async () => {
    const port = await freePort();
    const entrypoint = spawn(process.execPath, [join(workspace, 'deploy', 'docker', 'dev-entrypoint.mjs')], {
      env: { PATH: process.env.PATH, SERVICE: 'demo', PORT: String(port) },
      stdio: 'ignore',
    });
    try {
      await until(port, 'v1', 60_000);
      writeFileSync(join(workspace, 'services', 'demo', 'src', 'main.ts'), serviceSource('v2'));
      await until(port, 'v2', 60_000);
      const exited = once(entrypoint, 'exit');
      entrypoint.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      assert.equal(code, 0);
      assert.equal(await answer(port), undefined, 'the service stopped with it');
    } finally {
      entrypoint.kill('SIGKILL');
    }
  });

  test('refuses a SERVICE that names no folder of services/', async () => {
    const entrypoint = spawn(process.execPath, [join(workspace, 'deploy', 'docker', 'dev-entrypoint.mjs')], {
      env: { PATH: process.env.PATH, SERVICE: 'missing' },
      stdio: 'ignore',
    });
    const [code] = (await once(entrypoint, 'exit')) as [number | null];
    assert.equal(code, 2);
  });
});
