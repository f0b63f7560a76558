import { z } from 'zod';
import { relayCompletion, stopList, type CompletionDialect } from '../completion/relay.js';
import { QueryRequest, QueryResponse, sseDescription } from '../contract/language-model.js';
import { jsonBodyErrors, keyErrors, workerErrors } from '../contract/responses.js';
import { errorBody } from '../http/errors.js';
import { route } from '../http/route.js';

/** POST /query's own shapes: the whole completion, then one event per piece and a last one. */
const queryDialect: CompletionDialect = {
  idPrefix: 'cmpl-',
  whole: ({ id, created }, done) => ({
    id,
    object: 'text_completion',
    created,
    model: done.model,
    text: done.text,
    finish_reason: done.finish_reason,
    usage: done.usage,
  }),
  piece: ({ id }, model, delta, index) => ({ id, model, index, delta }),
  finish: ({ id }, _model, done) => [
    { id, model: done.model, finish_reason: done.finish_reason, usage: done.usage },
  ],
  error: errorBody,
};

/** One completion, as JSON or as a Server-Sent Events stream. */
export const queryRoute = route({
  method: 'post',
  path: '/query',
  modelCalls: 'llm',
  operationId: 'query',
  tag: 'Language model',
  auth: 'apiKey',
  summary: 'Complete a prompt',
  description: 'Runs a language model on the prompt, as one JSON response or streamed as server-sent events.',
  body: QueryRequest,
  responses: {
    200: {
      description: 'The completion (JSON), or its event stream when `stream` is true.',
      content: {
        'application/json': { schema: QueryResponse },
        'text/event-stream': {
          schema: z.string().meta({
            description: sseDescription,
            // Each event's data is one of these; documented here so a reader can find them.
            'x-event-data': {
              oneOf: ['QueryStreamDelta', 'QueryStreamEnd', 'Error'].map((id) => ({
                $ref: `#/components/schemas/${id}`,
              })),
            },
          }),
          example:
            'data: {"id":"cmpl-1","model":"m","index":0,"delta":"Hello"}\n\ndata: {"id":"cmpl-1","model":"m","finish_reason":"stop","usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3}}\n\ndata: [DONE]\n\n',
        },
      },
    },
  },
  errors: [
    ...keyErrors,
    ...jsonBodyErrors,
    'quota_exceeded',
    'unknown_model',
    'model_loading',
    ...workerErrors,
  ],
  async serve({ res, body, deps }) {
    const request = {
      prompt: body.prompt,
      model: body.model ?? '',
      max_tokens: body.max_tokens,
      temperature: body.temperature,
      top_p: body.top_p,
      stop: stopList(body.stop),
      seed: body.seed,
    };
    await relayCompletion(res, deps, request, queryDialect, body.stream);
  },
});
