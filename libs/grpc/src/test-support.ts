// Shared by this package's tests only (not exported from index).
import { createServer } from 'node:net';
import { createLogger, type Logger } from '@switchboard/telemetry';
import type {
  CompleteChunk,
  CompleteRequest__Output,
  CompleteResponse,
  LlmHandlers,
} from '@switchboard/contracts';
import type { ContextImplementation } from './handlers.js';
import {
  defineService,
  startGrpcServer,
  type GrpcServer,
  type GrpcServerOptions,
  type ServiceRegistration,
} from './server.js';

export const silent: Logger = createLogger({ service: 'test', level: 'silent' });

export interface LogRecord {
  level: string;
  obj: Record<string, unknown>;
  msg: string | undefined;
}

/** A logger whose per-call child loggers record what they are asked to log. */
export function captureLogger(): { logger: Logger; records: LogRecord[] } {
  const records: LogRecord[] = [];
  const base = createLogger({ service: 'test', level: 'silent' });
  const record = (level: string) => (obj: Record<string, unknown>, msg?: string) => {
    records.push({ level, obj, msg });
  };
  const child = Object.assign(Object.create(base) as Logger, {
    debug: record('debug'),
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
  });
  base.child = (() => child) as unknown as Logger['child'];
  return { logger: base, records };
}

export function response(text: string, model = 'test-model'): CompleteResponse {
  return {
    model,
    text,
    finish_reason: 'stop',
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

/** The Llm service with plain answers, any method replaced by the test. */
export function llm(overrides: Partial<ContextImplementation<LlmHandlers>> = {}): ServiceRegistration {
  return defineService('Llm', {
    Complete: async (request: CompleteRequest__Output) => response(request.prompt),
    async *StreamComplete(request: CompleteRequest__Output): AsyncIterable<CompleteChunk> {
      for (const word of request.prompt.split(' ')) yield { delta: word };
      yield { done: response(request.prompt) };
    },
    ListModels: async () => ({
      models: [{ id: 'test-model', status: 'ready', is_default: true, description: 'test' }],
    }),
    ...overrides,
  });
}

export async function serve(
  services: ServiceRegistration[],
  logger: Logger = silent,
  options: Pick<GrpcServerOptions, 'clusterSecret' | 'laterServices'> = {},
): Promise<GrpcServer & { address: string }> {
  const server = await startGrpcServer({ port: 0, host: '127.0.0.1', logger, services, ...options });
  return Object.assign(server, { address: `127.0.0.1:${server.port}` });
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Resolves when the signal aborts (or after `ms`, rejecting, so a broken test does not hang). */
export function aborted(signal: AbortSignal, ms = 5_000): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(() => reject(new Error(`signal not aborted within ${ms} ms`)), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A promise and its resolve, for handing a value from a handler to the test. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
