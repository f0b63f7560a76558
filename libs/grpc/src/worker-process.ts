// A worker's entry point (main.ts): read its config, start it, close it on SIGTERM or SIGINT. A
// start-up that fails exits 1 with the reason on stderr; errors that explain themselves (a bad
// setting, a missing prerequisite) are printed without a stack trace.
import { createLogger, type Logger, type LoggerOptions, type Tracing } from '@switchboard/telemetry';
import { shutdownOnSignals, type Closable } from './signals.js';

export interface WorkerProcessOptions<C extends { readonly logLevel: NonNullable<LoggerOptions['level']> }> {
  /** The service name every log line carries: `llm`, `browser`, … */
  readonly service: string;
  /** Reads and validates the config (from process.env); throws on a bad setting. */
  readonly loadConfig: () => C;
  readonly start: (config: C, logger: Logger) => Promise<Closable>;
  /** Error classes whose message is the whole story (ConfigError and the like). */
  readonly selfExplainingErrors: readonly (abstract new (...args: never[]) => Error)[];
  /** The process's tracing, started before the service was imported: flushed after the close. */
  readonly tracing?: Tracing;
}

export function runWorkerProcess<C extends { readonly logLevel: NonNullable<LoggerOptions['level']> }>(
  options: WorkerProcessOptions<C>,
): void {
  const main = async () => {
    const config = options.loadConfig();
    const logger = createLogger({ service: options.service, level: config.logLevel });
    const running = await options.start(config, logger);
    shutdownOnSignals(
      {
        close: async () => {
          try {
            await running.close();
          } finally {
            await options.tracing?.shutdown();
          }
        },
      },
      { logger },
    );
  };
  main().catch((error: unknown) => {
    const explained = options.selfExplainingErrors.some((kind) => error instanceof kind);
    process.stderr.write(
      `${explained ? (error as Error).message : ((error as Error).stack ?? String(error))}\n`,
    );
    process.exit(1);
  });
}
