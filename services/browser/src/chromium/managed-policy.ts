import { readdir, readFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { join } from 'node:path';

/** Where Debian's Chromium reads mandatory policies from (every *.json file in it). */
export const CHROMIUM_POLICY_DIR = '/etc/chromium/policies/managed';

/** The policy the worker ships (services/browser/policy/switchboard.json) and requires. */
export const SHIPPED_POLICY_FILE = new URL('../../policy/switchboard.json', import.meta.url);

export class ManagedPolicyError extends Error {}

/**
 * Fails unless Chromium will run under the shipped managed policy: its second, Chromium-side
 * layer (no file:, chrome: or devtools: pages, no downloads, no UDP around the proxy) holds
 * whatever a DevTools client sends, and no flag can stand in for it. So a worker without it
 * refuses to start rather than serve sessions without that layer. Every setting must be present
 * with the shipped value, and no other file in the folder may set it differently.
 */
export async function checkManagedPolicy(dir: string): Promise<void> {
  const required = JSON.parse(await readFile(SHIPPED_POLICY_FILE, 'utf8')) as Record<string, unknown>;
  const install = `install ${SHIPPED_POLICY_FILE.pathname} as ${join(dir, 'switchboard.json')} (deploy/local/setup.mjs does, as root)`;
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => name.endsWith('.json')).sort();
  } catch {
    throw new ManagedPolicyError(`Chromium's managed policy folder ${dir} does not exist: ${install}`);
  }
  const found = new Map<string, unknown[]>();
  for (const name of names) {
    let policies: Record<string, unknown>;
    try {
      policies = JSON.parse(await readFile(join(dir, name), 'utf8')) as Record<string, unknown>;
    } catch (error) {
      throw new ManagedPolicyError(
        `Chromium's managed policy ${join(dir, name)} is unreadable: ${(error as Error).message}`,
      );
    }
    for (const [key, value] of Object.entries(policies)) found.set(key, [...(found.get(key) ?? []), value]);
  }
  const wrong = Object.entries(required)
    .filter(([key, value]) => {
      const values = found.get(key) ?? [];
      return values.length === 0 || values.some((v) => !isDeepStrictEqual(v, value));
    })
    .map(([key]) => key);
  if (wrong.length > 0) {
    throw new ManagedPolicyError(
      `Chromium's managed policy in ${dir} is missing or overrides ${wrong.join(', ')}: ${install}`,
    );
  }
}
