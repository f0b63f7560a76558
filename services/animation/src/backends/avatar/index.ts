// The `avatar` back-end: a talking portrait made by the D-ID Talks API. Configured by
// a base URL and an API key; without either it still answers `describe()` (configured: false, so
// the gateway refuses avatar jobs with 503 unavailable) and refuses any job that reaches it.
import type { Logger } from '@switchboard/telemetry';
import { PermanentJobError, type Backend, type BackendInfo } from '../backend.js';
import type { FfmpegPaths } from '../../media/run-ffmpeg.js';
import { defaultRetryPolicy, type RetryPolicy } from './backoff.js';
import { DidClient } from './client.js';
import type { VendorErrorKind } from './errors.js';
import { renderTalk } from './render.js';
import { DEFAULT_VOICE } from './wire.js';

export { DEFAULT_VOICE } from './wire.js';
export type { VendorErrorKind } from './errors.js';

export const MODEL_ID = 'd-id-talks';

export interface AvatarBackendOptions {
  /** AVATAR_BASE_URL; unset (or no key) = not configured. */
  readonly baseUrl?: string | undefined;
  /** AVATAR_API_KEY, sent as `Authorization: Basic <key>` exactly as given; never logged. */
  readonly apiKey?: string | undefined;
  /** The whole vendor part of one attempt (uploads, talk, polls, download) must end within this. */
  readonly deadlineMs: number;
  /** The first gap between status polls; later gaps grow (see `pollDelayMs`). */
  readonly pollIntervalMs: number;
  /** One HTTP request (answer and body) must end within this, else it is retried. */
  readonly requestTimeoutMs: number;
  readonly ffmpeg: FfmpegPaths;
  readonly logger: Logger;
  /** The voice for text jobs that name none (AVATAR_DEFAULT_VOICE); default en-US-JennyNeural. */
  readonly defaultVoice?: string | undefined;
  /** Retry waits for transient failures; default 0.5 s doubling to 8 s. */
  readonly retry?: RetryPolicy | undefined;
  /** Called once per vendor failure seen (retried or not), for the worker's metrics. */
  readonly onVendorError?: ((kind: VendorErrorKind) => void) | undefined;
  /** For tests; default the global fetch. */
  readonly fetch?: typeof fetch | undefined;
  /** Largest vendor video accepted; default 512 MiB. */
  readonly maxResultBytes?: number | undefined;
}

export function createAvatarBackend(options: AvatarBackendOptions): Backend {
  const { baseUrl, apiKey } = options;
  if (!baseUrl || !apiKey) return unconfigured();
  // A bad URL is an operator error: fail at start-up, not on the first job.
  new URL(baseUrl);
  const onVendorError = options.onVendorError ?? (() => undefined);
  const client = new DidClient({
    baseUrl,
    apiKey,
    requestTimeoutMs: options.requestTimeoutMs,
    retry: options.retry ?? defaultRetryPolicy,
    fetch: options.fetch ?? fetch,
    onVendorError,
    maxResultBytes: options.maxResultBytes ?? 512 * 1024 * 1024,
  });
  const deps = {
    client,
    ffmpeg: options.ffmpeg,
    apiKey,
    deadlineMs: options.deadlineMs,
    pollIntervalMs: options.pollIntervalMs,
    defaultVoice: options.defaultVoice ?? DEFAULT_VOICE,
    onVendorError,
  };
  const info: BackendInfo = {
    name: 'avatar',
    configured: true,
    models: [
      {
        id: MODEL_ID,
        status: 'ready',
        isDefault: true,
        description: 'D-ID Talks API: a talking portrait from an image and audio or text',
      },
    ],
  };
  options.logger.info({ backend: 'avatar', model: MODEL_ID }, 'avatar back-end configured');
  return {
    name: 'avatar',
    describe: () => info,
    // A vendor has nothing to load; whether it answers is found out per job, with retries.
    ready: async () => undefined,
    render: (request, out) => renderTalk(deps, request, out),
    dispose: async () => undefined,
  };
}

function unconfigured(): Backend {
  const info: BackendInfo = {
    name: 'avatar',
    configured: false,
    models: [
      {
        id: MODEL_ID,
        status: 'failed',
        isDefault: true,
        description: 'not configured: AVATAR_BASE_URL/AVATAR_API_KEY are unset, so avatar jobs are refused',
      },
    ],
  };
  return {
    name: 'avatar',
    describe: () => info,
    ready: async () => undefined,
    render: async () => {
      throw new PermanentJobError('unavailable', 'the avatar service is not configured');
    },
    dispose: async () => undefined,
  };
}
