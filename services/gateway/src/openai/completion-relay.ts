import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import type { CompleteRequest, CompleteResponse__Output } from '@switchboard/contracts';
import { isSwitchboardError, SwitchboardError } from '@switchboard/errors';
import type { LiveRequests } from '../auth/live-requests.js';
import { callContext } from '../clients/call-context.js';
import type { LlmWorker } from '../clients/llm.js';
import { SseStream } from '../http/sse.js';
import { firstWithin, type StreamTimings } from '../routes/query.js';
import { openAiErrorBody } from './errors.js';

/** The fields every OpenAI completion object and chunk starts with. */
export interface Envelope {
  id: string;
  object: string;
  created: number;
  model: string;
}

/** How one OpenAI endpoint dresses the worker's answer: the text one and the chat one differ. */
export interface CompletionDialect {
  idPrefix: string;
  object: string;
  chunkObject: string;
  whole(envelope: Envelope, done: CompleteResponse__Output): object;
  /** The chunk before any text (chat's `delta.role`), if the dialect has one. */
  opening?(envelope: Envelope): object;
  piece(envelope: Envelope, text: string): object;
  finish(envelope: Envelope, reason: string): object;
}

export interface RelayOptions {
  stream: boolean;
  includeUsage: boolean;
}

/**
 * Runs one completion on the llm worker and answers it in `dialect`, as JSON or as OpenAI's
 * server-sent chunks ending in `data: [DONE]`. As on POST /query: a client that goes away
 * cancels the generation, a request the worker refuses at once is a plain JSON error with its
 * real status, and a stream ends with an error event once a new request with its key would be
 * refused (revoked, key store unreachable, address no longer allowed).
 */
export async function relayCompletion(
  res: Response,
  deps: { llm: LlmWorker; timings: StreamTimings; live: LiveRequests },
  request: CompleteRequest,
  dialect: CompletionDialect,
  options: RelayOptions,
): Promise<void> {
  const envelope = (model: string, object: string): Envelope => ({
    id,
    object,
    created,
    model,
  });
  const id = `${dialect.idPrefix}${randomUUID().replaceAll('-', '')}`;
  const created = Math.floor(Date.now() / 1000);
  const abort = new AbortController();
  res.on('close', () => abort.abort());

  if (!options.stream) {
    const done = await deps.llm.complete(request, callContext(res, abort.signal));
    res.json(dialect.whole(envelope(done.model, dialect.object), done));
    return;
  }

  const chunks = deps.llm.stream(request, callContext(res, abort.signal))[Symbol.asyncIterator]();
  const pending = chunks.next();
  const early = await firstWithin(pending, deps.timings.firstEventWaitMs);
  const sse = new SseStream(res, deps.timings.pingIntervalMs);
  deps.live.track(res, res.locals.ctx.recheckAccess, (reason) => {
    abort.abort();
    sse.send(openAiErrorBody(reason, res.locals.ctx.requestId));
    sse.end();
  });
  let model = request.model ?? '';
  let opened = false;
  const open = () => {
    if (!opened && dialect.opening) sse.send(dialect.opening(envelope(model, dialect.chunkObject)));
    opened = true;
  };
  try {
    for (let next = early ?? (await pending); !next.done; next = await chunks.next()) {
      const chunk = next.value;
      model = chunk.model || model;
      open();
      if (chunk.kind === 'delta' && chunk.delta !== undefined) {
        sse.send(dialect.piece(envelope(model, dialect.chunkObject), chunk.delta));
      } else if (chunk.kind === 'done' && chunk.done) {
        const done = chunk.done;
        sse.send(dialect.finish(envelope(done.model || model, dialect.chunkObject), done.finish_reason));
        if (options.includeUsage) {
          sse.send({ ...envelope(done.model || model, dialect.chunkObject), choices: [], usage: done.usage });
        }
      }
    }
  } catch (error) {
    if (abort.signal.aborted) return;
    const known = isSwitchboardError(error) ? error : new SwitchboardError('internal');
    if (!isSwitchboardError(error)) res.locals.ctx.logger.error({ err: error }, 'stream failed');
    sse.send(openAiErrorBody(known, res.locals.ctx.requestId));
  }
  if (!abort.signal.aborted) sse.end();
}

/** OpenAI's `stop`: a string or a list; ours is always a list. */
export const stopList = (stop: string | string[] | null | undefined): string[] =>
  stop === undefined || stop === null ? [] : typeof stop === 'string' ? [stop] : stop;
