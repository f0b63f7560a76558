import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The gateway's KEY_PEPPER for the local cluster. Keys live in NATS under the state dir and
 * outlast a run, and another pepper would make every one of them fail, so the runner makes one per
 * state dir and keeps it (`<state dir>/credentials/key-pepper`, mode 0600). The gateway reads it
 * from the file (KEY_PEPPER_FILE), so it is in no process's environment. A KEY_PEPPER or
 * KEY_PEPPER_FILE the operator gives is passed on instead.
 */
export function gatewayKeyPepperEnv(env: NodeJS.ProcessEnv, stateDir: string): NodeJS.ProcessEnv {
  if (env.KEY_PEPPER || env.KEY_PEPPER_FILE) return {};
  return { KEY_PEPPER_FILE: keptKeyPepperFile(stateDir) };
}

/**
 * WEBHOOK_SECRETS_KEY for the gateway and the webhook sender: endpoint secrets are stored sealed
 * under it in PostgreSQL, which outlasts a run, and another key would leave every stored secret
 * unreadable, so it is kept per state dir exactly like the key pepper
 * (`<state dir>/credentials/webhook-secrets-key`). The operator's own wins.
 */
export function webhookSecretsKeyEnv(env: NodeJS.ProcessEnv, stateDir: string): NodeJS.ProcessEnv {
  if (env.WEBHOOK_SECRETS_KEY || env.WEBHOOK_SECRETS_KEY_FILE) return {};
  return { WEBHOOK_SECRETS_KEY_FILE: keptSecretFile(stateDir, 'webhook-secrets-key') };
}

/** The pepper's file, created with a fresh random pepper when the state dir has none yet. */
export function keptKeyPepperFile(stateDir: string): string {
  return keptSecretFile(stateDir, 'key-pepper');
}

/**
 * `<state dir>/credentials/<name>`, created with 32 random bytes (hex) when the state dir has none
 * yet, and never replaced afterwards.
 */
export function keptSecretFile(stateDir: string, name: string): string {
  const dir = join(stateDir, 'credentials');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, name);
  try {
    // `wx`: never replaces an existing secret, even when two runners start at once.
    writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return file;
}
