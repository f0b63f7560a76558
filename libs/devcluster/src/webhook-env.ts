import { webhookSecretsKeyEnv } from './key-pepper.js';

/**
 * What the gateway (registration) and the webhook sender (delivery) need to share the webhook
 * store: its database, and the key its endpoints' secrets are sealed with. The database is the
 * operator's WEBHOOK_DATABASE_URL(_FILE) when given (shared env passes it on), else the usage
 * database's, the runner's own or the operator's: the same server, tables of their own. The key is
 * kept under the state dir like the key pepper, as the stored secrets outlive a run.
 */
export function webhookEnv(
  env: NodeJS.ProcessEnv,
  usageEnv: NodeJS.ProcessEnv,
  stateDir: string,
): NodeJS.ProcessEnv {
  return { ...webhookDatabaseEnv(env, usageEnv), ...webhookSecretsKeyEnv(env, stateDir) };
}

function webhookDatabaseEnv(env: NodeJS.ProcessEnv, usageEnv: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.WEBHOOK_DATABASE_URL || env.WEBHOOK_DATABASE_URL_FILE) return {};
  const usageFile = usageEnv.USAGE_DATABASE_URL_FILE || env.USAGE_DATABASE_URL_FILE;
  if (usageFile) return { WEBHOOK_DATABASE_URL_FILE: usageFile };
  return env.USAGE_DATABASE_URL ? { WEBHOOK_DATABASE_URL: env.USAGE_DATABASE_URL } : {};
}
