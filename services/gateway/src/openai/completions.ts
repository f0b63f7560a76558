import type { Router } from 'express';
import { CompletionRequest } from '../contract/openai.js';
import { jsonBody } from '../http/json-body.js';
import { exactRouter } from '../http/router.js';
import { validate } from '../http/validate.js';
import { relayCompletion, stopList, type CompletionDialect } from './completion-relay.js';
import type { CompletionDeps } from './router.js';

/** The legacy text completion: `choices[].text`. */
const textDialect: CompletionDialect = {
  idPrefix: 'cmpl-',
  object: 'text_completion',
  chunkObject: 'text_completion',
  whole: (envelope, done) => ({
    ...envelope,
    choices: [{ text: done.text, index: 0, logprobs: null, finish_reason: done.finish_reason }],
    usage: done.usage,
  }),
  piece: (envelope, text) => ({
    ...envelope,
    choices: [{ text, index: 0, logprobs: null, finish_reason: null }],
  }),
  finish: (envelope, reason) => ({
    ...envelope,
    choices: [{ text: '', index: 0, logprobs: null, finish_reason: reason }],
  }),
};

/** POST /v1/completions. OpenAI's default temperature is 1, not /query's 0.7. */
export function completionsRouter(deps: CompletionDeps): Router {
  const router = exactRouter();
  router.post('/completions', jsonBody(deps.bodyLimitBytes), async (req, res) => {
    const body = validate(CompletionRequest, req.body);
    await relayCompletion(
      res,
      deps,
      {
        prompt: typeof body.prompt === 'string' ? body.prompt : body.prompt[0]!,
        model: body.model,
        max_tokens: body.max_tokens ?? undefined,
        temperature: body.temperature ?? 1,
        top_p: body.top_p ?? undefined,
        stop: stopList(body.stop),
        seed: body.seed ?? undefined,
      },
      textDialect,
      { stream: body.stream ?? false, includeUsage: body.stream_options?.include_usage ?? false },
    );
  });
  return router;
}
