import { createLogger, startTracing } from '@switchboard/telemetry';

// Tracing starts before the gateway is imported: its instrumentations patch express,
// @grpc/grpc-js and ioredis as they load, which a static import would have loaded already.
const tracing = await startTracing({ service: 'gateway' });
const [{ ConfigError }, { loadGatewayConfig }, { startGateway }] = await Promise.all([
  import('@switchboard/config'),
  import('./config.js'),
  import('./gateway.js'),
]);

async function main(): Promise<void> {
  const config = loadGatewayConfig();
  const logger = createLogger({ service: 'gateway', level: config.logLevel });
  const gateway = await startGateway(config, logger);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, 'signal received');
      gateway
        .close()
        .finally(() => tracing.shutdown())
        .then(
          () => process.exit(0),
          (error: unknown) => {
            logger.error({ err: error }, 'shutdown failed');
            process.exit(1);
          },
        );
    });
  }
}

main().catch((error: unknown) => {
  // Config errors name every bad variable; anything else is unexpected at start-up.
  process.stderr.write(
    `${error instanceof ConfigError ? error.message : ((error as Error).stack ?? String(error))}\n`,
  );
  process.exit(1);
});
