// Compile-time checks (tsc fails the build if they break); the runtime test only marks the file.
import { test } from 'node:test';
import type {
  CompleteChunk,
  CompleteRequest__Output,
  CompleteResponse,
  CompleteResponse__Output,
  LlmClient,
  LlmHandlers,
  TranscribeChunk__Output,
  TranscribeResponse,
  WhisperHandlers,
} from '@switchboard/contracts';
import type { unary } from './client.js';
import type {
  ClientStreamHandler,
  ContextHandler,
  ContextImplementation,
  ServerStreamHandler,
  UnaryHandler,
} from './handlers.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(): T | undefined {
  return undefined;
}

assertType<
  Equal<ContextHandler<LlmHandlers['Complete']>, UnaryHandler<CompleteRequest__Output, CompleteResponse>>
>();
assertType<
  Equal<
    ContextHandler<LlmHandlers['StreamComplete']>,
    ServerStreamHandler<CompleteRequest__Output, CompleteChunk>
  >
>();
assertType<
  Equal<
    ContextHandler<WhisperHandlers['Transcribe']>,
    ClientStreamHandler<TranscribeChunk__Output, TranscribeResponse>
  >
>();
assertType<Equal<keyof ContextImplementation<LlmHandlers>, 'Complete' | 'StreamComplete' | 'ListModels'>>();

// unary() infers request and response from a generated client's overloaded method.
type UnaryResult = ReturnType<typeof unary<Parameters<LlmClient['Complete']>[0], CompleteResponse__Output>>;
declare const client: LlmClient;
declare const call: typeof unary;
const _inferred = () => call(client.Complete.bind(client), { prompt: 'x' });
assertType<Equal<ReturnType<typeof _inferred>, UnaryResult>>();
assertType<Equal<Awaited<ReturnType<typeof _inferred>>, CompleteResponse__Output>>();

// A handler of the wrong shape does not compile.
export const wrong: ContextImplementation<LlmHandlers> = {
  Complete: async () => ({ text: 'x' }),
  // @ts-expect-error: server streaming wants an async iterable, not a promise
  StreamComplete: async () => ({ delta: 'x' }),
  ListModels: async () => ({ models: [] }),
};

test('handler and client types are checked at compile time', () => {});
