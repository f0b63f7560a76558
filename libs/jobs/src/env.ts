// The job-system settings read under the same names by the gateway and the workers.
import { z } from 'zod';
import { env } from '@switchboard/config';

export const jobEnvFields = {
  ANIMATION_ACK_WAIT_MS: env
    .positiveInt(30_000)
    .describe(
      'A job whose worker sends no heartbeat for this long goes to another worker; set the same value on the gateway and the animation workers.',
    ),
  ANIMATION_JOB_RETENTION_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 365)
    .default(24 * 7)
    .describe('How long job records are kept after they were last written (1 to 8760).'),
};

export function jobSettings(e: { ANIMATION_ACK_WAIT_MS: number; ANIMATION_JOB_RETENTION_HOURS: number }) {
  return {
    ackWaitMs: e.ANIMATION_ACK_WAIT_MS,
    jobRetentionMs: e.ANIMATION_JOB_RETENTION_HOURS * 60 * 60 * 1000,
  };
}
