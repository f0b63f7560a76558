/** POST /query and GET /models: the request the handlers validate and what they answer. */
import { requestLimits } from '@switchboard/contracts';
import { z } from 'zod';

const limits = requestLimits.completion;

/** One stop string: non-empty and bounded in length. */
export const StopString = z.string().min(1).max(limits.stopSequenceChars);

export const QueryRequest = z
  .object({
    prompt: z.string().min(1, 'must not be empty').meta({ description: 'The prompt; must not be empty.' }),
    model: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .meta({ description: "A model id from `GET /models`; default: the cluster's default language model." }),
    // The upper bound is the model's context, which only the worker knows.
    max_tokens: z
      .number()
      .int()
      .min(1)
      .max(2 ** 31 - 1)
      .optional()
      // The worker fills the default in (it alone knows the model's context).
      .meta({
        default: limits.defaultMaxTokens,
        description: "Most tokens to generate; capped by the model's context (above the cap → 400).",
      }),
    temperature: z
      .number()
      .min(limits.temperature.min)
      .max(limits.temperature.max)
      .default(0.7)
      .meta({ description: '0 = greedy and deterministic.' }),
    stream: z.boolean().default(false).meta({ description: 'Stream the completion as server-sent events.' }),
    top_p: z
      .number()
      .gt(0)
      .max(1)
      .optional()
      .meta({ description: 'Nucleus sampling mass, in (0, 1] (extension).' }),
    stop: z
      .union([StopString, z.array(StopString).max(limits.stopSequences)])
      .optional()
      .meta({ description: 'Text that ends the generation (extension).' }),
    seed: z.number().int().optional().meta({ description: 'Sampling seed (extension).' }),
  })
  .meta({ id: 'QueryRequest' });

const Usage = z
  .object({
    prompt_tokens: z.number().int().min(0),
    completion_tokens: z.number().int().min(0),
    total_tokens: z.number().int().min(0),
  })
  .meta({ id: 'Usage' });

const FinishReason = z.enum(['stop', 'length']).meta({ id: 'FinishReason' });
const completionId = z.string().regex(/^cmpl-/);

export const QueryResponse = z
  .object({
    id: completionId,
    object: z.literal('text_completion'),
    created: z.number().int().meta({ description: 'Unix time, seconds.' }),
    model: z.string(),
    text: z.string(),
    finish_reason: FinishReason,
    usage: Usage,
  })
  .meta({ id: 'QueryResponse' });

const QueryStreamDelta = z
  .object({ id: completionId, model: z.string(), index: z.number().int().min(0), delta: z.string() })
  .meta({
    id: 'QueryStreamDelta',
    description: 'One event per generated piece, flushed as it is generated.',
  });

const QueryStreamEnd = z
  .object({ id: completionId, model: z.string(), finish_reason: FinishReason, usage: Usage })
  .meta({ id: 'QueryStreamEnd', description: 'The last event before `data: [DONE]`.' });

export const sseDescription =
  'With `stream: true`: server-sent events, each `data: <JSON>` followed by a blank line. One `QueryStreamDelta` per generated piece, ' +
  'then one `QueryStreamEnd`, then `data: [DONE]`. An error after the stream started is sent as `data: <Error>` followed by ' +
  '`data: [DONE]`. A client that disconnects cancels the generation.';

/** Registered so the event shapes appear in the document, though no operation returns them as JSON. */
export const streamEventSchemas = [QueryStreamDelta, QueryStreamEnd] as const;

export const Model = z
  .object({
    id: z.string(),
    capability: z.enum(['llm', 'whisper', 'diffusion', 'animation']),
    status: z.enum(['ready', 'loading']),
    default: z.boolean().meta({ description: 'The default model of its capability.' }),
    development: z.boolean().meta({
      description:
        'A tiny random-weight development model (built when the repository holds no real one): its output is noise.',
    }),
    description: z.string().optional(),
    dtype: z
      .string()
      .optional()
      .meta({ description: 'The element type of the weights as loaded (`fp32`, `fp16`, `q8`); once ready.' }),
    context_length: z
      .number()
      .int()
      .optional()
      .meta({ description: '`llm`: tokens of context, prompt and completion together; once ready.' }),
    multilingual: z
      .boolean()
      .optional()
      .meta({ description: '`whisper`: false for English-only models (no language detection); once ready.' }),
    languages: z
      .array(z.string())
      .optional()
      .meta({ description: '`whisper`: the ISO 639-1 codes `language` may name; once ready.' }),
    native_width: z.number().int().optional().meta({
      description: '`diffusion`, `animation` (video-diffusion): the size the model was trained for.',
    }),
    native_height: z.number().int().optional(),
  })
  .meta({ id: 'Model' });
