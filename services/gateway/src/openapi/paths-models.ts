/** API.md §2–§4: language model, models list, transcription, image generation. */
import {
  errorResponses,
  headerRef,
  json,
  jsonBody,
  jsonBodyErrors,
  keyErrors,
  ref,
  success,
  workerErrors,
  type Paths,
  type Schemas,
} from './components.js';

export const modelSchemas: Schemas = {
  QueryRequest: {
    type: 'object',
    required: ['prompt'],
    properties: {
      prompt: { type: 'string', minLength: 1, description: 'The prompt; must not be empty.' },
      model: {
        type: 'string',
        description: "A model id from `GET /models`; default: the cluster's default language model.",
      },
      max_tokens: {
        type: 'integer',
        minimum: 1,
        default: 2048,
        description: "Most tokens to generate; capped by the model's context (above the cap → 400).",
      },
      temperature: {
        type: 'number',
        minimum: 0,
        maximum: 2,
        default: 0.7,
        description: '0 = greedy and deterministic.',
      },
      stream: {
        type: 'boolean',
        default: false,
        description: 'Stream the completion as server-sent events.',
      },
      top_p: {
        type: 'number',
        exclusiveMinimum: 0,
        maximum: 1,
        description: 'Nucleus sampling mass, in (0, 1] (extension).',
      },
      stop: {
        description: 'Text that ends the generation (extension).',
        oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 4 }],
      },
      seed: { type: 'integer', description: 'Sampling seed (extension).' },
    },
  },
  Usage: {
    type: 'object',
    required: ['prompt_tokens', 'completion_tokens', 'total_tokens'],
    properties: {
      prompt_tokens: { type: 'integer', minimum: 0 },
      completion_tokens: { type: 'integer', minimum: 0 },
      total_tokens: { type: 'integer', minimum: 0 },
    },
  },
  FinishReason: { type: 'string', enum: ['stop', 'length'] },
  QueryResponse: {
    type: 'object',
    required: ['id', 'object', 'created', 'model', 'text', 'finish_reason', 'usage'],
    properties: {
      id: { type: 'string', pattern: '^cmpl-' },
      object: { const: 'text_completion' },
      created: { type: 'integer', description: 'Unix time, seconds.' },
      model: { type: 'string' },
      text: { type: 'string' },
      finish_reason: ref('FinishReason'),
      usage: ref('Usage'),
    },
  },
  QueryStreamDelta: {
    type: 'object',
    description: 'One event per generated piece, flushed as it is generated.',
    required: ['id', 'model', 'index', 'delta'],
    properties: {
      id: { type: 'string', pattern: '^cmpl-' },
      model: { type: 'string' },
      index: { type: 'integer', minimum: 0 },
      delta: { type: 'string' },
    },
  },
  QueryStreamEnd: {
    type: 'object',
    description: 'The last event before `data: [DONE]`.',
    required: ['id', 'finish_reason', 'usage'],
    properties: { id: { type: 'string' }, finish_reason: ref('FinishReason'), usage: ref('Usage') },
  },
  Model: {
    type: 'object',
    required: ['id', 'capability', 'status', 'default'],
    properties: {
      id: { type: 'string' },
      capability: { type: 'string', enum: ['llm', 'whisper', 'diffusion', 'animation'] },
      status: { type: 'string', enum: ['ready', 'loading'] },
      default: { type: 'boolean', description: 'The default model of its capability.' },
      description: { type: 'string' },
    },
  },
  ModelList: {
    type: 'object',
    required: ['data'],
    properties: { data: { type: 'array', items: ref('Model') } },
  },
  TranscribeRequest: {
    type: 'object',
    required: ['file'],
    properties: {
      file: {
        type: 'string',
        contentMediaType: 'application/octet-stream',
        description:
          'The audio: mp3, wav, m4a, ogg, flac, webm and whatever else the decoder reads. Any length (long audio is windowed); streamed to the worker.',
      },
      language: {
        type: 'string',
        pattern: '^[a-z]{2}$',
        description: 'ISO 639-1 code; auto-detected when omitted.',
      },
      format: {
        type: 'string',
        enum: ['text', 'srt', 'vtt', 'json'],
        default: 'text',
        description: '`json` is an extension.',
      },
    },
  },
  Transcript: {
    type: 'object',
    required: ['text', 'language', 'duration_s', 'segments'],
    properties: {
      text: { type: 'string' },
      language: { type: 'string', description: 'ISO 639-1 code.' },
      duration_s: { type: 'number', minimum: 0 },
      segments: {
        type: 'array',
        items: {
          type: 'object',
          required: ['start', 'end', 'text'],
          properties: {
            start: { type: 'number', minimum: 0, description: 'Seconds.' },
            end: { type: 'number', minimum: 0, description: 'Seconds.' },
            text: { type: 'string' },
          },
        },
      },
    },
  },
  GenerateImageRequest: {
    type: 'object',
    required: ['prompt'],
    properties: {
      prompt: { type: 'string', minLength: 1 },
      width: { type: 'integer', minimum: 64, maximum: 2048, multipleOf: 8, default: 1024 },
      height: { type: 'integer', minimum: 64, maximum: 2048, multipleOf: 8, default: 1024 },
      steps: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
      negative_prompt: { type: 'string', description: 'Extension.' },
      seed: {
        type: 'integer',
        minimum: 0,
        description: 'Same seed + same parameters = same image (extension).',
      },
      guidance_scale: { type: 'number', minimum: 0, maximum: 30, description: 'Extension.' },
    },
  },
  ImageResult: {
    type: 'object',
    required: ['id', 'url', 'width', 'height', 'steps', 'seed', 'model', 'created'],
    properties: {
      id: { type: 'string', pattern: '^img-' },
      url: { type: 'string', description: '`/api/images/<id>.png`, readable by the same key only.' },
      width: { type: 'integer' },
      height: { type: 'integer' },
      steps: { type: 'integer' },
      seed: { type: 'integer', description: 'The seed used (chosen at random when not given).' },
      model: { type: 'string' },
      created: { type: 'integer', description: 'Unix time, seconds.' },
    },
  },
};

const sseDescription =
  'With `stream: true`: server-sent events, each `data: <JSON>` followed by a blank line. One `QueryStreamDelta` per generated piece, ' +
  'then one `QueryStreamEnd`, then `data: [DONE]`. An error after the stream started is sent as `data: <Error>` followed by ' +
  '`data: [DONE]`. A client that disconnects cancels the generation.';

export const modelPaths: Paths = {
  '/query': {
    post: {
      operationId: 'query',
      tags: ['Language model'],
      summary: 'Complete a prompt',
      description:
        'Runs a language model on the prompt, as one JSON response or streamed as server-sent events.',
      requestBody: jsonBody('QueryRequest'),
      responses: {
        200: success('apiKey', 'The completion (JSON), or its event stream when `stream` is true.', {
          'application/json': { schema: ref('QueryResponse') },
          'text/event-stream': {
            schema: { type: 'string', description: sseDescription },
            'x-event-data': { oneOf: [ref('QueryStreamDelta'), ref('QueryStreamEnd'), ref('Error')] },
            example:
              'data: {"id":"cmpl-1","model":"m","index":0,"delta":"Hello"}\n\ndata: {"id":"cmpl-1","finish_reason":"stop","usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3}}\n\ndata: [DONE]\n\n',
          },
        }),
        ...errorResponses('apiKey', [
          ...keyErrors,
          ...jsonBodyErrors,
          'unknown_model',
          'model_loading',
          ...workerErrors,
        ]),
      },
    },
  },
  '/models': {
    get: {
      operationId: 'listModels',
      tags: ['Language model'],
      summary: 'List the models of each capability',
      description:
        'Models of every capability whose worker answers; a model still loading is listed with `status: loading`.',
      responses: {
        200: success('apiKey', 'The models.', json(ref('ModelList'))),
        ...errorResponses('apiKey', [...keyErrors, ...workerErrors]),
      },
    },
  },
  '/transcribe': {
    post: {
      operationId: 'transcribe',
      tags: ['Transcription'],
      summary: 'Transcribe audio',
      description:
        "The upload is streamed to the worker; it may be as large as the key's tier allows (basic 25 MB, professional 100 MB, enterprise 500 MB by default).",
      requestBody: {
        required: true,
        content: {
          'multipart/form-data': {
            schema: ref('TranscribeRequest'),
            encoding: { file: { contentType: 'audio/*, video/webm, application/octet-stream' } },
          },
        },
      },
      responses: {
        200: success(
          'apiKey',
          'The transcript in the requested `format`.',
          {
            'text/plain; charset=utf-8': {
              schema: { type: 'string', description: '`format=text`: the plain text.' },
            },
            'application/x-subrip': {
              schema: {
                type: 'string',
                description: '`format=srt`: cues numbered from 1, `HH:MM:SS,mmm --> HH:MM:SS,mmm`.',
              },
            },
            'text/vtt': {
              schema: {
                type: 'string',
                description: '`format=vtt`: starts with `WEBVTT`, `HH:MM:SS.mmm --> HH:MM:SS.mmm`.',
              },
            },
            'application/json': { schema: ref('Transcript') },
          },
          { 'Content-Language': headerRef('Content-Language') },
        ),
        ...errorResponses('apiKey', [
          ...keyErrors,
          'invalid_request',
          'invalid_audio',
          'payload_too_large',
          'unsupported_media_type',
          'model_loading',
          ...workerErrors,
        ]),
      },
    },
  },
  '/generate-image': {
    post: {
      operationId: 'generateImage',
      tags: ['Images'],
      summary: 'Generate an image',
      requestBody: jsonBody('GenerateImageRequest'),
      responses: {
        200: success(
          'apiKey',
          'The generated image, stored in the shared object store.',
          json(ref('ImageResult')),
        ),
        ...errorResponses('apiKey', [...keyErrors, ...jsonBodyErrors, 'model_loading', ...workerErrors]),
      },
    },
  },
  '/api/images/{id}.png': {
    get: {
      operationId: 'getImage',
      tags: ['Images'],
      summary: 'Download a generated image',
      description: 'The PNG, exactly `width`×`height`, to the key that generated it; any other key gets 404.',
      parameters: [
        {
          name: 'id',
          in: 'path',
          required: true,
          description: 'The image id (`img-…`).',
          schema: { type: 'string', pattern: '^img-' },
        },
      ],
      responses: {
        200: success('apiKey', 'The PNG.', {
          'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } },
        }),
        ...errorResponses('apiKey', [...keyErrors, 'not_found', ...workerErrors]),
      },
    },
  },
};
