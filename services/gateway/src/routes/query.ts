import { randomUUID } from 'node:crypto';
import type { Router } from 'express';
import { isSwitchboardError, SwitchboardError } from '@switchboard/errors';
import { exactRouter } from '../http/router.js';
import type { LiveRequests } from '../auth/live-requests.js';
import type { LlmWorker } from '../clients/llm.js';
import { callContext } from '../clients/call-context.js';
import { errorBody } from '../http/errors.js';
import { jsonBody } from '../http/json-body.js';
import { SseStream } from '../http/sse.js';
import { validate } from '../http/validate.js';
import { QueryRequest } from '../contract/language-model.js';

/** POST /query (API.md §2): one completion, as JSON or as a Server-Sent Events stream. */
export interface StreamTimings {
  /** `: ping` comment interval on an idle stream, so proxies keep it open. */
  pingIntervalMs: number;
  /** How long to wait for the worker's first event before committing to a 200 stream. */
  firstEventWaitMs: number;
}

/** Resolves with the first chunk, or with `undefined` once `ms` have passed without one. */
export function firstWithin<T>(next: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([next, timeout]).finally(() => clearTimeout(timer));
}

export function queryRouter(
  llm: LlmWorker,
  bodyLimitBytes: number,
  timings: StreamTimings,
  live: LiveRequests,
): Router {
  const router = exactRouter();

  router.post('/query', jsonBody(bodyLimitBytes), async (req, res) => {
    const body = validate(QueryRequest, req.body);
    const request = {
      prompt: body.prompt,
      model: body.model ?? '',
      max_tokens: body.max_tokens,
      temperature: body.temperature,
      top_p: body.top_p,
      stop: body.stop === undefined ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop,
      seed: body.seed,
    };
    const id = `cmpl-${randomUUID().replaceAll('-', '')}`;
    const created = Math.floor(Date.now() / 1000);

    // A client that goes away cancels the generation on the worker, streamed or not.
    const abort = new AbortController();
    res.on('close', () => abort.abort());

    if (!body.stream) {
      const done = await llm.complete(request, callContext(res, abort.signal));
      res.json({
        id,
        object: 'text_completion',
        created,
        model: done.model,
        text: done.text,
        finish_reason: done.finish_reason,
        usage: done.usage,
      });
      return;
    }

    // Stream: a request the worker refuses at once (unknown model, still loading) gets a plain
    // JSON error with its real status. If no event comes within firstEventWaitMs (the request
    // waits in the worker's queue), the 200 stream starts anyway and pings keep it open.
    const chunks = llm.stream(request, callContext(res, abort.signal))[Symbol.asyncIterator]();
    const pending = chunks.next();
    const early = await firstWithin(pending, timings.firstEventWaitMs);
    const sse = new SseStream(res, timings.pingIntervalMs);
    // Once a new request with this key would be refused (revoked, key store unreachable past the
    // staleness bound, address no longer allowed), the stream ends with that error as an event.
    live.track(res, res.locals.ctx.recheckAccess, (reason) => {
      abort.abort();
      sse.send(errorBody(reason, res.locals.ctx.requestId));
      sse.end();
    });
    let index = 0;
    let model = request.model;
    try {
      for (let next = early ?? (await pending); !next.done; next = await chunks.next()) {
        const chunk = next.value;
        if (chunk.kind === 'delta' && chunk.delta !== undefined) {
          sse.send({ id, model: chunk.model || model, index: index++, delta: chunk.delta });
          model = chunk.model || model;
        } else if (chunk.kind === 'done' && chunk.done) {
          sse.send({
            id,
            model: chunk.done.model,
            finish_reason: chunk.done.finish_reason,
            usage: chunk.done.usage,
          });
        }
      }
    } catch (error) {
      if (abort.signal.aborted) return;
      const known = isSwitchboardError(error) ? error : new SwitchboardError('internal');
      if (!isSwitchboardError(error)) res.locals.ctx.logger.error({ err: error }, 'stream failed');
      sse.send(errorBody(known, res.locals.ctx.requestId));
    }
    if (!abort.signal.aborted) sse.end();
  });

  return router;
}
