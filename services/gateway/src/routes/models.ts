import type { ModelInfo__Output } from '@switchboard/contracts';
import { z } from 'zod';
import { callContext } from '../clients/call-context.js';
import { ModelCatalogue } from '../clients/model-catalogue.js';
import type { Capability } from '../clients/model-lister.js';
import { Model } from '../contract/language-model.js';
import { json, keyErrors, workerErrors } from '../contract/responses.js';
import { perApp, route } from '../http/route.js';
/**
 * What a loaded model is (facts a worker reports once the model is ready): its dtype, and what
 * applies to its capability — an llm's context, a whisper model's languages, an image or video
 * model's native size.
 */
function modelFacts(capability: Capability, model: ModelInfo__Output) {
  return {
    ...(model.dtype ? { dtype: model.dtype } : {}),
    ...(capability === 'llm' && model.context_length > 0 ? { context_length: model.context_length } : {}),
    ...(capability === 'whisper' && model.languages.length > 0
      ? { multilingual: model.multilingual, languages: model.languages }
      : {}),
    ...(model.native_width > 0
      ? { native_width: model.native_width, native_height: model.native_height }
      : {}),
  };
}

const catalogues = perApp((deps) => new ModelCatalogue(deps.clients));

/**
 * The models of every capability whose worker answers. A worker that is down is
 * left out rather than failing the whole list; /admin shows worker health.
 */
export const listModelsRoute = route({
  method: 'get',
  path: '/models',
  operationId: 'listModels',
  tag: 'Language model',
  auth: 'apiKey',
  summary: 'List the models of each capability',
  description:
    'Models of every capability whose worker answers; a model still loading is listed with `status: loading`.',
  responses: {
    200: {
      description: 'The models.',
      content: json(z.object({ data: z.array(Model) }).meta({ id: 'ModelList' })),
    },
  },
  errors: [...keyErrors, ...workerErrors],
  async handle({ res, deps }) {
    const answers = await catalogues(deps).read(callContext(res));
    const data = answers.flatMap(({ capability, models }) =>
      (models ?? []).map((model) => ({
        id: model.id,
        capability,
        // The proto field is a string; the workers report only these two.
        status: model.status as 'ready' | 'loading',
        default: model.is_default,
        development: model.development,
        ...(model.description ? { description: model.description } : {}),
        ...modelFacts(capability, model),
      })),
    );
    return { data };
  },
});
