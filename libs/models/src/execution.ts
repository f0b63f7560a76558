// ONNX Runtime execution providers from config, in the shape Transformers.js takes them
// (`device` picks its defaults, `session_options.executionProviders` the real list).
import { z } from 'zod';

export const executionProviderNames = ['cpu', 'cuda'] as const;
export type ExecutionProviderName = (typeof executionProviderNames)[number];

/**
 * The ORT_* variables every inference worker reads; spread into the worker's config schema so
 * the names and defaults are the same in every worker (and in the chart).
 */
export const ortEnvFields = {
  ORT_EXECUTION_PROVIDERS: z
    .string()
    .default('cpu')
    .transform((raw) =>
      raw
        .split(',')
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(executionProviderNames)).min(1))
    .describe(
      `ONNX Runtime execution providers, comma-separated in order of preference (${executionProviderNames.join(', ')}), e.g. \`cuda,cpu\`; ONNX Runtime falls back in order.`,
    ),
  ORT_DEVICE_ID: z.coerce.number().int().min(0).default(0).describe('GPU index for the CUDA provider.'),
  ORT_INTRA_OP_THREADS: z.coerce
    .number()
    .int()
    .positive()
    .optional()
    .describe("Threads per session for one operator; unset = ONNX Runtime's default (all cores)."),
};

export interface ExecutionConfig {
  readonly providers: readonly ExecutionProviderName[];
  readonly deviceId: number;
  readonly intraOpThreads?: number | undefined;
}

export interface SessionOptions {
  executionProviders: (string | { name: string; deviceId: number })[];
  intraOpNumThreads?: number;
}

/** What `from_pretrained` gets: the first provider names the device, the list goes to ORT. */
export function transformersDeviceOptions(config: ExecutionConfig): {
  device: ExecutionProviderName;
  session_options: SessionOptions;
} {
  const [first = 'cpu'] = config.providers;
  const session_options: SessionOptions = {
    executionProviders: config.providers.map((name) =>
      name === 'cuda' ? { name, deviceId: config.deviceId } : name,
    ),
  };
  if (config.intraOpThreads !== undefined) session_options.intraOpNumThreads = config.intraOpThreads;
  return { device: first, session_options };
}
