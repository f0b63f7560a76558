import { rmSync } from 'node:fs';
import { startPostgres, type PostgresHandle } from '@switchboard/devcluster';

let server: Promise<PostgresHandle> | undefined;

/**
 * A fresh, empty usage database for a test gateway (or a stack of replicas, which share one). One
 * PostgreSQL serves every database of a test process: started on first use, killed and its files
 * removed when the process exits. Tests that kill or restart Postgres start their own instead.
 */
export async function testUsageDatabase(): Promise<string> {
  server ??= startPostgres().then((postgres) => {
    process.once('exit', () => {
      postgres.process.child.kill('SIGKILL');
      rmSync(postgres.directory, { recursive: true, force: true });
    });
    return postgres;
  });
  return (await server).createDatabase();
}

/** `env` with a usage database of its own unless it names one already. */
export async function withUsageDatabase(env: Record<string, string>): Promise<Record<string, string>> {
  if (env.USAGE_DATABASE_URL !== undefined || env.USAGE_DATABASE_URL_FILE !== undefined) return env;
  return { ...env, USAGE_DATABASE_URL: await testUsageDatabase() };
}
