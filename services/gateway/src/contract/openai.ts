/**
 * The OpenAI-compatible API under /v1 (API.md §1's keys, allowlists, tiers, limits and request
 * ids apply unchanged): OpenAI's request and response shapes, validated and documented here once.
 * Fields OpenAI's clients may send as `null` accept it; features the cluster does not have are
 * refused with a 400 naming the field rather than silently ignored.
 */
import { requestLimits } from '@switchboard/contracts';
import { z } from 'zod';
import { declareRoute } from './registry.js';
import { TranscribeFields } from './transcription.js';
import { json, jsonBodyErrors, keyErrors, workerErrors } from './responses.js';

const limits = requestLimits.completion;

/** A field that only has its default here: absent, null, or the value that changes nothing. */
const onlyDefault = <T extends string | number | boolean>(allowed: readonly T[], what: string) =>
  z
    .unknown()
    .refine((v) => v === undefined || v === null || allowed.includes(v as T), `${what} is not supported`)
    .optional()
    .meta({ description: `Not supported: only ${allowed.map((v) => JSON.stringify(v)).join(' or ')}.` });

const model = z.string().min(1).max(200).meta({ description: 'A model id from `GET /v1/models`.' });
const maxTokens = z
  .number()
  .int()
  .min(1)
  .max(2 ** 31 - 1)
  .nullish()
  .meta({
    description: `Most tokens to generate; default ${limits.defaultMaxTokens}, capped by the model's context (above the cap → 400).`,
  });
const sampling = {
  temperature: z
    .number()
    .min(limits.temperature.min)
    .max(limits.temperature.max)
    .nullish()
    .meta({ description: 'Default 1; 0 = greedy and deterministic.' }),
  top_p: z.number().gt(0).max(1).nullish().meta({ description: 'Nucleus sampling mass, in (0, 1].' }),
  stop: z
    .union([z.string().min(1), z.array(z.string().min(1)).max(limits.stopSequences)])
    .nullish()
    .meta({ description: `Up to ${limits.stopSequences} strings that end the generation.` }),
  seed: z
    .number()
    .int()
    .nullish()
    .meta({ description: 'Sampling seed: same seed, same request → same text.' }),
  stream: z.boolean().nullish().meta({ description: 'Stream chunks as server-sent events.' }),
  stream_options: z
    .object({ include_usage: z.boolean().nullish() })
    .nullish()
    .meta({ description: '`include_usage`: one more chunk, with empty `choices`, carrying `usage`.' }),
  n: onlyDefault([1], 'n other than 1'),
  logprobs: onlyDefault([false, 0], 'logprobs'),
  top_logprobs: onlyDefault([0], 'top_logprobs'),
  frequency_penalty: onlyDefault([0], 'frequency_penalty'),
  presence_penalty: onlyDefault([0], 'presence_penalty'),
};

export const CompletionRequest = z
  .object({
    model,
    prompt: z
      .union([z.string(), z.array(z.string()).length(1, 'exactly one prompt per request is supported')])
      .meta({ description: 'The prompt: a string, or an array of exactly one string.' }),
    max_tokens: maxTokens,
    ...sampling,
    echo: onlyDefault([false], 'echo'),
    best_of: onlyDefault([1], 'best_of other than 1'),
    suffix: onlyDefault([''], 'suffix'),
  })
  .meta({ id: 'OpenAiCompletionRequest' });

const TextPart = z.object({ type: z.literal('text'), text: z.string() });
const ChatMessage = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant']),
  content: z
    .union([z.string(), z.array(TextPart)])
    .meta({ description: 'Text, or an array of text parts (joined).' }),
  name: z.string().optional(),
});

export const ChatCompletionRequest = z
  .object({
    model,
    messages: z.array(ChatMessage).min(1, 'at least one message is required').max(1000),
    max_tokens: maxTokens,
    max_completion_tokens: maxTokens.meta({ description: 'Wins over `max_tokens` when both are given.' }),
    ...sampling,
    response_format: z
      .object({ type: z.literal('text') })
      .nullish()
      .meta({ description: 'Only `{"type": "text"}`.' }),
    tools: onlyDefault([], 'tools'),
    tool_choice: onlyDefault(['none'], 'tool_choice'),
  })
  .meta({ id: 'OpenAiChatCompletionRequest' });

const Usage = z
  .object({
    prompt_tokens: z.number().int().min(0),
    completion_tokens: z.number().int().min(0),
    total_tokens: z.number().int().min(0),
  })
  .meta({ id: 'OpenAiUsage' });
const finishReason = z.enum(['stop', 'length']);
const created = z.number().int().meta({ description: 'Unix time, seconds.' });

const Completion = z
  .object({
    id: z.string().regex(/^cmpl-/),
    object: z.literal('text_completion'),
    created,
    model: z.string(),
    choices: z.array(
      z.object({ text: z.string(), index: z.literal(0), logprobs: z.null(), finish_reason: finishReason }),
    ),
    usage: Usage,
  })
  .meta({ id: 'OpenAiCompletion' });

const CompletionChunk = z
  .object({
    id: z.string().regex(/^cmpl-/),
    object: z.literal('text_completion'),
    created,
    model: z.string(),
    choices: z.array(
      z.object({
        text: z.string(),
        index: z.literal(0),
        logprobs: z.null(),
        finish_reason: finishReason.nullable(),
      }),
    ),
    usage: Usage.nullish(),
  })
  .meta({ id: 'OpenAiCompletionChunk' });

const ChatCompletion = z
  .object({
    id: z.string().regex(/^chatcmpl-/),
    object: z.literal('chat.completion'),
    created,
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.literal(0),
        message: z.object({ role: z.literal('assistant'), content: z.string(), refusal: z.null() }),
        logprobs: z.null(),
        finish_reason: finishReason,
      }),
    ),
    usage: Usage,
  })
  .meta({ id: 'OpenAiChatCompletion' });

const ChatCompletionChunk = z
  .object({
    id: z.string().regex(/^chatcmpl-/),
    object: z.literal('chat.completion.chunk'),
    created,
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.literal(0),
        delta: z.object({ role: z.literal('assistant').optional(), content: z.string().optional() }),
        logprobs: z.null(),
        finish_reason: finishReason.nullable(),
      }),
    ),
    usage: Usage.nullish(),
  })
  .meta({ id: 'OpenAiChatCompletionChunk' });

/** Registered so the chunk shapes appear in the document, though no operation returns them as JSON. */
export const openAiStreamSchemas = [CompletionChunk, ChatCompletionChunk] as const;

const streamOf = (chunk: string, example: string) => ({
  'text/event-stream': {
    schema: z.string().meta({
      description: `With \`stream: true\`: server-sent events, each \`data: <${chunk}>\`, ending with \`data: [DONE]\`. An error after the stream started is sent as \`data: {"error": …}\`. A client that disconnects cancels the generation.`,
      'x-event-data': { $ref: `#/components/schemas/${chunk}` },
    }),
    example,
  },
});

const OpenAiModel = z
  .object({
    id: z.string(),
    object: z.literal('model'),
    created: created.meta({ description: 'When this gateway first saw the model ready (Unix seconds).' }),
    owned_by: z.string(),
    capability: z
      .enum(['llm', 'whisper', 'diffusion', 'animation'])
      .meta({ description: 'Extension: which endpoint runs it.' }),
  })
  .meta({ id: 'OpenAiModel' });

const completionErrors = [
  ...keyErrors,
  ...jsonBodyErrors,
  'unknown_model',
  'model_loading',
  ...workerErrors,
] as const;

declareRoute({
  method: 'get',
  path: '/v1/models',
  operationId: 'openAiListModels',
  tag: 'OpenAI-compatible',
  auth: 'apiKey',
  errorDialect: 'openai',
  summary: 'List the ready models (OpenAI shape)',
  description: 'Every ready model of every capability whose worker answers.',
  responses: {
    200: {
      description: 'The models.',
      content: json(
        z.object({ object: z.literal('list'), data: z.array(OpenAiModel) }).meta({ id: 'OpenAiModelList' }),
      ),
    },
  },
  errors: [...keyErrors, ...workerErrors],
});

declareRoute({
  method: 'get',
  path: '/v1/models/{id}',
  operationId: 'openAiGetModel',
  tag: 'OpenAI-compatible',
  auth: 'apiKey',
  errorDialect: 'openai',
  summary: 'One ready model (OpenAI shape)',
  params: z.object({ id: z.string().min(1).max(200) }),
  responses: { 200: { description: 'The model.', content: json(OpenAiModel) } },
  errors: [...keyErrors, 'not_found', ...workerErrors],
});

declareRoute({
  method: 'post',
  path: '/v1/completions',
  operationId: 'openAiCompletion',
  tag: 'OpenAI-compatible',
  auth: 'apiKey',
  errorDialect: 'openai',
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
  errors: completionErrors,
});

declareRoute({
  method: 'post',
  path: '/v1/chat/completions',
  operationId: 'openAiChatCompletion',
  tag: 'OpenAI-compatible',
  auth: 'apiKey',
  errorDialect: 'openai',
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
  errors: completionErrors,
});

const imageLimits = requestLimits.image;
const sideInBounds = (side: number) =>
  side >= imageLimits.side.min && side <= imageLimits.side.max && side % imageLimits.sideMultiple === 0;

export const ImageGenerationRequest = z
  .object({
    prompt: z.string().min(1, 'must not be empty').max(10_000),
    model: z
      .string()
      .min(1)
      .max(200)
      .nullish()
      .meta({ description: "Default: the cluster's default image model." }),
    n: z
      .number()
      .int()
      .min(1)
      .max(4)
      .nullish()
      .meta({ description: '1 to 4 images, generated in turn; default 1.' }),
    size: z
      .string()
      .regex(/^\d{1,5}x\d{1,5}$/, 'expected WIDTHxHEIGHT, e.g. 512x512')
      .refine(
        (size) => size.split('x').every((side) => sideInBounds(Number(side))),
        `each side must be ${imageLimits.side.min}–${imageLimits.side.max} and a multiple of ${imageLimits.sideMultiple}`,
      )
      .nullish()
      .meta({ description: '`WIDTHxHEIGHT`; default `1024x1024`.' }),
    response_format: z.enum(['url', 'b64_json']).nullish().meta({
      description: '`url` (default): a link readable with the same key; `b64_json`: the PNG inline.',
    }),
    seed: z
      .number()
      .int()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .nullish()
      .meta({ description: 'Extension: same seed + same parameters = same image; image i uses seed + i.' }),
    steps: z
      .number()
      .int()
      .min(imageLimits.steps.min)
      .max(imageLimits.steps.max)
      .nullish()
      .meta({ description: 'Extension: denoising steps; default 20.' }),
    style: onlyDefault(['vivid', 'natural'], 'style'),
    quality: onlyDefault(['auto', 'standard'], 'quality'),
  })
  .meta({ id: 'OpenAiImageRequest' });

const ImagesResponse = z
  .object({
    created,
    data: z.array(
      z.object({
        url: z
          .string()
          .optional()
          .meta({ description: '`…/api/images/<id>.png` on this gateway, readable by the same key only.' }),
        b64_json: z.string().optional().meta({ description: 'The PNG, base64.' }),
      }),
    ),
  })
  .meta({ id: 'OpenAiImagesResponse' });

declareRoute({
  method: 'post',
  path: '/v1/images/generations',
  operationId: 'openAiGenerateImages',
  tag: 'OpenAI-compatible',
  auth: 'apiKey',
  errorDialect: 'openai',
  summary: 'Generate images (OpenAI shape)',
  description: 'The images are stored like those of POST /generate-image.',
  body: ImageGenerationRequest,
  responses: { 200: { description: 'The images.', content: json(ImagesResponse) } },
  errors: [...keyErrors, ...jsonBodyErrors, 'unknown_model', 'model_loading', ...workerErrors],
});

export const openAiTranscriptFormats = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;

/** The form's text parts (multer hands them over as strings), next to the streamed `file`. */
export const TranscriptionFields = z.object({
  model: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: "A whisper model id; default: the cluster's default." }),
  language: TranscribeFields.shape.language,
  prompt: z
    .string()
    .max(10_000)
    .optional()
    .meta({ description: 'Accepted and ignored: the worker does not condition on a prompt.' }),
  response_format: z.enum(openAiTranscriptFormats).default('json'),
  temperature: z.coerce
    .number()
    .min(0)
    .max(1)
    .optional()
    .meta({ description: 'Accepted and ignored: decoding is greedy.' }),
  timestamp_granularities: z
    .union([z.literal('segment'), z.array(z.literal('segment')).max(1)])
    .optional()
    .meta({
      description: 'Sent as `timestamp_granularities[]`; only `segment` (word timestamps are not available).',
    }),
});

const VerboseTranscript = z
  .object({
    task: z.literal('transcribe'),
    language: z.string().meta({ description: 'ISO 639-1 code (OpenAI writes the English name).' }),
    duration: z.number().min(0).meta({ description: 'Seconds.' }),
    text: z.string(),
    segments: z.array(
      z.object({
        id: z.number().int().min(0),
        start: z.number().min(0),
        end: z.number().min(0),
        text: z.string(),
      }),
    ),
  })
  .meta({ id: 'OpenAiVerboseTranscription' });

declareRoute({
  method: 'post',
  path: '/v1/audio/transcriptions',
  operationId: 'openAiTranscribe',
  tag: 'OpenAI-compatible',
  auth: 'apiKey',
  errorDialect: 'openai',
  summary: 'Transcribe audio (OpenAI shape)',
  description:
    "Streamed to the worker exactly like POST /transcribe, within the key's tier's upload limit. The worker picks its model when the audio starts: send `model` before `file` in the form to name another than the default one (named after the file, a different model → 400 with `param: model`).",
  body: {
    content: {
      'multipart/form-data': {
        schema: TranscriptionFields.extend({
          file: z.string().meta({ contentMediaType: 'application/octet-stream', description: 'The audio.' }),
        }).meta({ id: 'OpenAiTranscriptionRequest' }),
        encoding: { file: { contentType: 'audio/*, video/webm, application/octet-stream' } },
      },
    },
  },
  responses: {
    200: {
      description: 'The transcript in `response_format`.',
      content: {
        'application/json': {
          schema: z.union([
            z.object({ text: z.string() }).meta({ id: 'OpenAiTranscription' }),
            VerboseTranscript,
          ]),
        },
        'text/plain; charset=utf-8': { schema: z.string().meta({ description: '`text`.' }) },
        'application/x-subrip': { schema: z.string().meta({ description: '`srt`.' }) },
        'text/vtt': { schema: z.string().meta({ description: '`vtt`.' }) },
      },
    },
  },
  errors: [
    ...keyErrors,
    'invalid_request',
    'invalid_audio',
    'unknown_model',
    'payload_too_large',
    'unsupported_media_type',
    'model_loading',
    'no_capacity',
    ...workerErrors,
  ],
});
