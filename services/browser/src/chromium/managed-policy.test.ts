import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkManagedPolicy, ManagedPolicyError, SHIPPED_POLICY_FILE } from './managed-policy.js';

describe('checkManagedPolicy', () => {
  let root: string;
  before(async () => (root = await mkdtemp(join(tmpdir(), 'sb-policy-'))));
  after(async () => rm(root, { recursive: true, force: true }));

  const folder = async (files: Record<string, string>) => {
    const dir = await mkdtemp(join(root, 'managed-'));
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    return dir;
  };

  it('accepts the shipped policy, beside other policies that do not contradict it', async () => {
    const dir = await folder({ 'other.json': '{"HomepageLocation": "about:blank"}' });
    await copyFile(SHIPPED_POLICY_FILE, join(dir, 'switchboard.json'));
    await checkManagedPolicy(dir);
  });

  it('refuses a missing folder, a missing policy and a contradicting file, naming the fix', async () => {
    await assert.rejects(
      checkManagedPolicy(join(root, 'absent')),
      (e: Error) => e instanceof ManagedPolicyError && /does not exist.*switchboard\.json/.test(e.message),
    );
    await assert.rejects(
      checkManagedPolicy(await folder({ 'x.json': '{"URLBlocklist": ["file://*"]}' })),
      /DownloadRestrictions/,
    );
    const contradicted = await folder({ 'zz.json': '{"DownloadRestrictions": 0}' });
    await copyFile(SHIPPED_POLICY_FILE, join(contradicted, 'switchboard.json'));
    await assert.rejects(checkManagedPolicy(contradicted), /overrides DownloadRestrictions/);
    await assert.rejects(checkManagedPolicy(await folder({ 'bad.json': '{' })), /unreadable/);
  });
});
