import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import type { CompleteRequest, CompleteResponse__Output } from '@switchboard/contracts';
import { isSwitchboardError, SwitchboardError } from '@switchboard/errors';
import { callContext } from '../clients/call-context.js';
import type { RouteDeps } from '../http/route.js';
import { SseStream } from '../http/sse.js';
import { meteringOf } from '../usage/metering-of.js';
import { completionValues, DEFAULT_MAX_TOKENS } from '../usage/meter-values.js';

/** Resolves with the first chunk, or with `undefined` once `ms` have passed without one. */
function firstWithin<T>(next: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([next, timeout]).finally(() => clearTimeout(timer));
}

/** The id and creation time every answer of one completion carries. */
export interface Completion {
  id: string;
  created: number;
}

/** How one surface words a completion: POST /query's shapes, or OpenAI's text and chat ones. */
export interface CompletionDialect {
  idPrefix: string;
  /** The whole answer, when not streamed. */
  whole(completion: Completion, done: CompleteResponse__Output): object;
  /** The event before any text (chat's `delta.role`), if the dialect has one. */
  opening?(completion: Completion, model: string): object;
  /** One generated piece; `index` counts the pieces. */
  piece(completion: Completion, model: string, text: string, index: number): object;
  /** The events that end the stream, from the worker's final answer. */
  finish(completion: Completion, model: string, done: CompleteResponse__Output): object[];
  /** The error body, as sent in an event once the stream has started. */
  error(error: SwitchboardError, requestId: string): object;
}

/**
 * Runs one completion on the llm worker and answers it in `dialect`, as JSON or as server-sent
 * events ending in `data: [DONE]`. A client that goes away cancels the generation, streamed or
 * not. A request the worker refuses at once (unknown model, still loading) gets a plain JSON error
 * with its real status; if no event comes within firstEventWaitMs (the request waits in the
 * worker's queue), the 200 stream starts anyway and pings keep it open. Once a new request with
 * its key would be refused (revoked, key store unreachable past the staleness bound, address no
 * longer allowed), the stream ends with that error as an event.
 */
export async function relayCompletion(
  res: Response,
  deps: RouteDeps,
  request: CompleteRequest,
  dialect: CompletionDialect,
  stream: boolean,
): Promise<void> {
  const {
    clients: { llm },
    config: { streams, workers },
    live,
  } = deps;
  // The output tokens are reserved up to max_tokens before the worker is called, and settled to
  // what it generated; a response that closes before record() releases or settles (metering.ts).
  const metered = await meteringOf(deps).admit(res, {
    capability: 'llm',
    model: request.model || null,
    reserve: { output_tokens: request.max_tokens ?? DEFAULT_MAX_TOKENS },
    check: ['requests', 'input_tokens'],
    deadlineMs: workers.llm.deadlineMs,
  });
  const completion = {
    id: `${dialect.idPrefix}${randomUUID().replaceAll('-', '')}`,
    created: Math.floor(Date.now() / 1000),
  };
  const abort = new AbortController();
  res.on('close', () => abort.abort());

  if (!stream) {
    const done = await llm.complete(request, callContext(res, abort.signal));
    await metered.record(completionValues(done.usage), done.model);
    res.json(dialect.whole(completion, done));
    return;
  }

  const chunks = llm.stream(request, callContext(res, abort.signal))[Symbol.asyncIterator]();
  const pending = chunks.next();
  const early = await firstWithin(pending, streams.firstEventWaitMs);
  const sse = new SseStream(res, streams.pingIntervalMs);
  const { ctx } = res.locals;
  live.track(res, ctx.recheckAccess, (reason) => {
    abort.abort();
    sse.send(dialect.error(reason, ctx.requestId));
    sse.end();
  });
  let model = request.model ?? '';
  let pieces = 0;
  let promptTokens = 0;
  let opened = false;
  // A stream cut short (client gone, access withdrawn, worker failed) counts what was generated:
  // the prompt the worker read, and a token per piece it sent (each piece is at least one).
  const generated = () => ({ requests: 1, input_tokens: promptTokens, output_tokens: pieces });
  metered.onClose(() => (pieces > 0 || promptTokens > 0 ? { values: generated(), model } : undefined));
  try {
    for (let next = early ?? (await pending); !next.done; next = await chunks.next()) {
      const chunk = next.value;
      model = chunk.model || model;
      promptTokens = chunk.prompt_tokens || promptTokens;
      if (!opened && dialect.opening) sse.send(dialect.opening(completion, model));
      opened = true;
      if (chunk.kind === 'delta' && chunk.delta !== undefined) {
        sse.send(dialect.piece(completion, model, chunk.delta, pieces++));
      } else if (chunk.kind === 'done' && chunk.done) {
        await metered.record(completionValues(chunk.done.usage), chunk.done.model || model);
        for (const event of dialect.finish(completion, model, chunk.done)) sse.send(event);
      }
    }
  } catch (error) {
    if (abort.signal.aborted) return;
    const known = isSwitchboardError(error) ? error : new SwitchboardError('internal');
    if (!isSwitchboardError(error)) ctx.logger.error({ err: error }, 'stream failed');
    sse.send(dialect.error(known, ctx.requestId));
    await (pieces > 0 || promptTokens > 0 ? metered.record(generated(), model) : metered.release());
  }
  if (!abort.signal.aborted) sse.end();
}

/** A `stop` given as a string or a list; the worker takes a list. */
export const stopList = (stop: string | string[] | null | undefined): string[] =>
  stop === undefined || stop === null ? [] : typeof stop === 'string' ? [stop] : stop;
