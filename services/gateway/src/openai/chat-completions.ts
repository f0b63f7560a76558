import type { Router } from 'express';
import { ChatCompletionRequest } from '../contract/openai.js';
import { jsonBody } from '../http/json-body.js';
import { exactRouter } from '../http/router.js';
import { validate } from '../http/validate.js';
import { relayCompletion, stopList, type CompletionDialect } from './completion-relay.js';
import type { CompletionDeps } from './router.js';

const chatDialect: CompletionDialect = {
  idPrefix: 'chatcmpl-',
  object: 'chat.completion',
  chunkObject: 'chat.completion.chunk',
  whole: (envelope, done) => ({
    ...envelope,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: done.text, refusal: null },
        logprobs: null,
        finish_reason: done.finish_reason,
      },
    ],
    usage: done.usage,
  }),
  opening: (envelope) => ({
    ...envelope,
    choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
  }),
  piece: (envelope, content) => ({
    ...envelope,
    choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }],
  }),
  finish: (envelope, reason) => ({
    ...envelope,
    choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: reason }],
  }),
};

/**
 * POST /v1/chat/completions. The worker renders the messages with the model's own chat template
 * (so the prompt is left empty); a model without one is its 400 with `param: model`.
 */
export function chatCompletionsRouter(deps: CompletionDeps): Router {
  const router = exactRouter();
  router.post('/chat/completions', jsonBody(deps.bodyLimitBytes), async (req, res) => {
    const body = validate(ChatCompletionRequest, req.body);
    const messages = body.messages.map((message) => ({
      role: message.role,
      content:
        typeof message.content === 'string'
          ? message.content
          : message.content.map((part) => part.text).join('\n'),
    }));
    await relayCompletion(
      res,
      deps,
      {
        prompt: '',
        messages,
        model: body.model,
        max_tokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
        temperature: body.temperature ?? 1,
        top_p: body.top_p ?? undefined,
        stop: stopList(body.stop),
        seed: body.seed ?? undefined,
      },
      chatDialect,
      { stream: body.stream ?? false, includeUsage: body.stream_options?.include_usage ?? false },
    );
  });
  return router;
}
