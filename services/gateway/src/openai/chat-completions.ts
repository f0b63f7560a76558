import { relayCompletion, stopList } from '../completion/relay.js';
import {
  ChatCompletion,
  ChatCompletionRequest,
  completionErrors,
  openAiSurface,
  streamOf,
} from '../contract/openai.js';
import { json } from '../contract/responses.js';
import { route } from '../http/route.js';
import { openAiDialect, type OpenAiShape } from './completion-dialect.js';
const chatShape: OpenAiShape = {
  idPrefix: 'chatcmpl-',
  object: 'chat.completion',
  chunkObject: 'chat.completion.chunk',
  answer: (done) => ({
    index: 0,
    message: { role: 'assistant', content: done.text, refusal: null },
    logprobs: null,
    finish_reason: done.finish_reason,
  }),
  opening: { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
  piece: (content) => ({ index: 0, delta: { content }, logprobs: null, finish_reason: null }),
  finish: (reason) => ({ index: 0, delta: {}, logprobs: null, finish_reason: reason }),
};

/**
 * POST /v1/chat/completions. The worker renders the messages with the model's own chat template
 * (so the prompt is left empty); a model without one is its 400 with `param: model`.
 */
export const openAiChatCompletionRoute = route({
  method: 'post',
  path: '/v1/chat/completions',
  modelCalls: 'llm',
  operationId: 'openAiChatCompletion',
  ...openAiSurface,
  summary: 'Chat (OpenAI shape)',
  description:
    "The messages are rendered with the model's own chat template by the worker; a model without one → 400 with `param: model`. Text only: no tools, images or audio in messages.",
  body: ChatCompletionRequest,
  responses: {
    200: {
      description:
        'The reply, or its chunks when `stream` is true: `delta.role` first, then `delta.content` pieces, then `finish_reason`, then the usage chunk when asked.',
      content: {
        ...json(ChatCompletion),
        ...streamOf(
          'OpenAiChatCompletionChunk',
          'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\ndata: [DONE]\n\n',
        ),
      },
    },
  },
  errors: [...completionErrors, 'quota_exceeded'],
  async serve({ res, body, deps }) {
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
      openAiDialect(chatShape, body.stream_options?.include_usage ?? false),
      body.stream ?? false,
    );
  },
});
