import type { JobTaker } from '@switchboard/jobs';
import type { Logger } from '@switchboard/telemetry';
import type { Backend } from './backend.js';

/** Writes what each back-end is now (models, configured) where gateways read it for /models. */
export async function describeBackends(
  taker: JobTaker,
  backends: readonly Backend[],
  logger: Logger,
): Promise<void> {
  for (const backend of backends) {
    const info = backend.describe();
    try {
      await taker.describe({
        backend: info.name,
        configured: info.configured,
        models: info.models.map((m) => ({
          id: m.id,
          status: m.status,
          is_default: m.isDefault,
          description: m.description,
          development: m.development ?? false,
          dtype: m.details?.dtype ?? '',
        })),
        native_width: info.nativeWidth,
        native_height: info.nativeHeight,
        updated_at: new Date().toISOString(),
      });
    } catch (error) {
      logger.warn({ err: error, backend: info.name }, 'back-end description not published');
    }
  }
}
