import { z } from 'zod';
import { SwitchboardError } from '@switchboard/errors';
import { callContext, type CallContext } from '../clients/call-context.js';
import { ModelCatalogue } from '../clients/model-catalogue.js';
import { OpenAiModel, openAiSurface } from '../contract/openai.js';
import { json, keyErrors, workerErrors } from '../contract/responses.js';
import { perApp, route } from '../http/route.js';

/**
 * GET /v1/models and GET /v1/models/{id}: the ready models of every capability in OpenAI's list
 * shape. OpenAI's `created` is when the model was made; a worker does not know that, so this is
 * when this gateway first saw the model ready — stable for as long as the gateway runs.
 */
const readyModelsOf = perApp((deps) => {
  const catalogue = new ModelCatalogue(deps.clients);
  const firstSeen = new Map<string, number>();

  async function readyModels(ctx: CallContext) {
    const answers = await catalogue.read(ctx);
    const now = Math.floor(Date.now() / 1000);
    return answers.flatMap(({ capability, models }) =>
      (models ?? [])
        .filter((model) => model.status === 'ready')
        .map((model) => {
          const key = `${capability}/${model.id}`;
          if (!firstSeen.has(key)) firstSeen.set(key, now);
          return {
            id: model.id,
            object: 'model' as const,
            created: firstSeen.get(key)!,
            owned_by: 'switchboard',
            capability,
          };
        }),
    );
  }

  return readyModels;
});

export const openAiListModelsRoute = route({
  method: 'get',
  path: '/v1/models',
  operationId: 'openAiListModels',
  ...openAiSurface,
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
  handle: async ({ res, deps }) => ({ object: 'list', data: await readyModelsOf(deps)(callContext(res)) }),
});

export const openAiGetModelRoute = route({
  method: 'get',
  path: '/v1/models/{id}',
  operationId: 'openAiGetModel',
  ...openAiSurface,
  summary: 'One ready model (OpenAI shape)',
  params: z.object({ id: z.string().min(1).max(200) }),
  responses: { 200: { description: 'The model.', content: json(OpenAiModel) } },
  errors: [...keyErrors, 'not_found', ...workerErrors],
  async handle({ req, res, deps }) {
    const id = String(req.params.id);
    const model = (await readyModelsOf(deps)(callContext(res))).find((m) => m.id === id);
    if (!model) {
      throw new SwitchboardError('not_found', {
        message: `The model '${id.slice(0, 200)}' does not exist or is not ready.`,
        param: 'model',
      });
    }
    return model;
  },
});

export const openAiModelRoutes = [openAiListModelsRoute, openAiGetModelRoute];
