/**
 * The OpenAI-compatible API under /v1 (the same keys, allowlists, tiers, limits and request ids as
 * the rest of the API): OpenAI's request and response shapes, validated and documented here once.
 * Fields OpenAI's clients may send as `null` accept it; features the cluster does not have are
 * refused with a 400 naming the field rather than silently ignored.
 */
import { requestLimits } from '@switchboard/contracts';
import { z } from 'zod';
import { StopString } from './language-model.js';
import { TranscribeFields } from './transcription.js';
import { jsonBodyErrors, keyErrors, workerErrors } from './responses.js';

const limits = requestLimits.completion;

/** What every /v1 route declares alike: its tag, API-key auth, and errors in OpenAI's body. */
export const openAiSurface = { tag: 'OpenAI-compatible', auth: 'apiKey', errorDialect: 'openai' } as const;

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
    .union([StopString, z.array(StopString).max(limits.stopSequences)])
    .nullish()
    .meta({
      description: `Up to ${limits.stopSequences} strings (each 1–${limits.stopSequenceChars} characters) that end the generation.`,
    }),
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

/** The fields a completion, a chat completion and their streamed chunks all open with. */
const envelope = (idPattern: RegExp, object: string) => ({
  id: z.string().regex(idPattern),
  object: z.literal(object),
  created,
  model: z.string(),
});

export const Completion = z
  .object({
    ...envelope(/^cmpl-/, 'text_completion'),
    choices: z.array(
      z.object({ text: z.string(), index: z.literal(0), logprobs: z.null(), finish_reason: finishReason }),
    ),
    usage: Usage,
  })
  .meta({ id: 'OpenAiCompletion' });

const CompletionChunk = z
  .object({
    ...envelope(/^cmpl-/, 'text_completion'),
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

export const ChatCompletion = z
  .object({
    ...envelope(/^chatcmpl-/, 'chat.completion'),
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
    ...envelope(/^chatcmpl-/, 'chat.completion.chunk'),
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

export const streamOf = (chunk: string, example: string) => ({
  'text/event-stream': {
    schema: z.string().meta({
      description: `With \`stream: true\`: server-sent events, each \`data: <${chunk}>\`, ending with \`data: [DONE]\`. An error after the stream started is sent as \`data: {"error": …}\`. A client that disconnects cancels the generation.`,
      'x-event-data': { $ref: `#/components/schemas/${chunk}` },
    }),
    example,
  },
});

export const OpenAiModel = z
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

export const completionErrors = [
  ...keyErrors,
  ...jsonBodyErrors,
  'unknown_model',
  'model_loading',
  ...workerErrors,
] as const;

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
      .meta({ description: '1 to 4 images, generated together (the worker batches them); default 1.' }),
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

export const ImagesResponse = z
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

export const VerboseTranscript = z
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

const animationLimits = requestLimits.animation;
const videoSideInBounds = (side: number) =>
  side >= animationLimits.side.min &&
  side <= animationLimits.side.max &&
  side % animationLimits.sideMultiple === 0;
const numberLike = /^\s*\d+(\.\d+)?\s*$/;

/**
 * POST /v1/videos, as a JSON body or as the form OpenAI's client sends (text parts, and
 * `input_reference` as a file part or as `input_reference[image_url]`). Form values are strings,
 * so every field reads strings; `seconds` and the extensions read number-like strings as well.
 */
export const VideoCreateRequest = z
  .object({
    model: z
      .string()
      .regex(/^video-diffusion(\/.+)?$/, 'expected video-diffusion (the image-to-video back-end)')
      .max(200)
      .nullish()
      .meta({
        description:
          '`video-diffusion` (default) or a `video-diffusion/<model>` id from `GET /v1/models`; the back-end runs its loaded model.',
      }),
    prompt: z.string().max(10_000).nullish().meta({
      description:
        'Accepted and ignored: the video-diffusion back-end animates the image without a text prompt.',
    }),
    input_reference: z
      .union([z.string(), z.object({ image_url: z.string({ error: 'is required' }) })])
      .optional()
      .meta({
        description:
          'Required: the image to animate. An image URL this API returned to the same key (`/api/images/img-….png`), or a `data:image/png|jpeg|webp;base64,…` URL; as a string or as `{"image_url": …}`. In a form, also a file part.',
      }),
    seconds: z
      .union([z.string().regex(numberLike, 'expected a number of seconds, e.g. "4"'), z.number()])
      .transform(Number)
      .pipe(z.number().min(animationLimits.durationS.min).max(animationLimits.durationS.max))
      .nullish()
      .meta({
        description: `Length of the clip, ${animationLimits.durationS.min}–${animationLimits.durationS.max} s (OpenAI's "4", "8", "12" included); default ${animationLimits.defaultDurationS}.`,
      }),
    size: z
      .string()
      .regex(/^\d{1,5}x\d{1,5}$/, 'expected WIDTHxHEIGHT, e.g. 512x512')
      .refine(
        (size) => size.split('x').every((side) => videoSideInBounds(Number(side))),
        `each side must be ${animationLimits.side.min}–${animationLimits.side.max} and a multiple of ${animationLimits.sideMultiple}`,
      )
      .nullish()
      .meta({ description: "`WIDTHxHEIGHT`; default: the model's native size." }),
    fps: z.coerce
      .number()
      .int()
      .min(animationLimits.fps.min)
      .max(animationLimits.fps.max)
      .optional()
      .meta({ description: `Extension: frames per second; default ${animationLimits.defaultFps}.` }),
    seed: z.coerce
      .number()
      .int()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .meta({ description: 'Extension: same seed + same parameters = same video.' }),
  })
  .meta({ id: 'OpenAiVideoCreateRequest' });

export const OpenAiVideo = z
  .object({
    id: z.string().regex(/^job-/).meta({ description: 'The animation job id.' }),
    object: z.literal('video'),
    model: z.string().meta({ description: "The job's back-end: `video-diffusion` for jobs made here." }),
    status: z.enum(['queued', 'in_progress', 'completed', 'failed']).meta({
      description:
        'The job status mapped: `queued`; `running` → `in_progress`; `succeeded` → `completed`; `failed` and `canceled` → `failed` (with `error`).',
    }),
    progress: z.number().int().min(0).max(100),
    created_at: created,
    completed_at: created.nullable().meta({ description: 'When the job ended (Unix seconds), or null.' }),
    expires_at: z.null(),
    seconds: z.string().meta({ description: 'The clip length asked (or made), in seconds.' }),
    size: z.string().meta({ description: '`WIDTHxHEIGHT`, as made once completed.' }),
    remixed_from_video_id: z.null(),
    error: z
      .object({ code: z.string(), message: z.string() })
      .nullable()
      .meta({ description: "The job's error (`canceled` for a canceled job)." }),
  })
  .meta({ id: 'OpenAiVideo' });

export const videoErrors = [...keyErrors, 'unavailable'] as const;
export const VideoPath = z.object({
  id: z
    .string()
    .regex(/^job-/)
    .meta({ description: 'The video (animation job) id. Jobs of other keys are `404 job_not_found`.' }),
});

export const VideoListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'Videos per page.' }),
  after: z.string().regex(/^job-/, 'expected the id of the previous page’s last video').optional().meta({
    description: 'The last `id` of the previous page: only older videos follow.',
  }),
  order: z.enum(['desc']).optional().meta({ description: 'Only `desc` (newest first).' }),
});

export const VideoContentQuery = z.object({
  variant: z
    .literal('video', { error: 'only video is available' })
    .optional()
    .meta({ description: 'Only `video` (the MP4).' }),
});
