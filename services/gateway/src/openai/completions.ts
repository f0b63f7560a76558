import { relayCompletion, stopList } from '../completion/relay.js';
import {
  Completion,
  CompletionRequest,
  completionErrors,
  openAiSurface,
  streamOf,
} from '../contract/openai.js';
import { json } from '../contract/responses.js';
import { route } from '../http/route.js';
import { openAiDialect, type OpenAiShape } from './completion-dialect.js';
/** The legacy text completion: `choices[].text`. */
const textShape: OpenAiShape = {
  idPrefix: 'cmpl-',
  object: 'text_completion',
  chunkObject: 'text_completion',
  answer: (done) => ({ text: done.text, index: 0, logprobs: null, finish_reason: done.finish_reason }),
  piece: (text) => ({ text, index: 0, logprobs: null, finish_reason: null }),
  finish: (reason) => ({ text: '', index: 0, logprobs: null, finish_reason: reason }),
};

/** POST /v1/completions. OpenAI's default temperature is 1, not /query's 0.7. */
export const openAiCompletionRoute = route({
  method: 'post',
  path: '/v1/completions',
  modelCalls: 'llm',
  operationId: 'openAiCompletion',
  ...openAiSurface,
  summary: 'Complete a prompt (OpenAI shape)',
  description: 'One choice (`n` = 1); no `echo`, `logprobs` or `suffix`.',
  body: CompletionRequest,
  responses: {
    200: {
      description: 'The completion, or its chunks when `stream` is true.',
      content: {
        ...json(Completion),
        ...streamOf(
          'OpenAiCompletionChunk',
          'data: {"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"text":"Hi","index":0,"logprobs":null,"finish_reason":null}]}\n\ndata: [DONE]\n\n',
        ),
      },
    },
  },
  errors: [...completionErrors, 'quota_exceeded'],
  async serve({ res, body, deps }) {
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
      openAiDialect(textShape, body.stream_options?.include_usage ?? false),
      body.stream ?? false,
    );
  },
});
