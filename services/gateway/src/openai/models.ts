import type { Router } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import { callContext, type CallContext } from '../clients/call-context.js';
import type { ModelLister } from '../clients/model-lister.js';
import { exactRouter } from '../http/router.js';
import { CachedModelList } from '../routes/models.js';

/**
 * GET /v1/models and GET /v1/models/{id}: the ready models of every capability in OpenAI's list
 * shape. OpenAI's `created` is when the model was made; a worker does not know that, so this is
 * when this gateway first saw the model ready — stable for as long as the gateway runs.
 */
export function openAiModelsRouter(listers: readonly ModelLister[], ttlMs = 2000): Router {
  const router = exactRouter();
  const lists = listers.map((lister) => new CachedModelList(lister, ttlMs));
  const firstSeen = new Map<string, number>();

  async function readyModels(ctx: CallContext) {
    const answers = await Promise.all(
      lists.map(async (list) => ({ capability: list.lister.capability, models: await list.get(ctx) })),
    );
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

  router.get('/models', async (_req, res) => {
    res.json({ object: 'list', data: await readyModels(callContext(res)) });
  });

  router.get('/models/:id', async (req, res) => {
    const model = (await readyModels(callContext(res))).find((m) => m.id === req.params.id);
    if (!model) {
      throw new SwitchboardError('not_found', {
        message: `The model '${req.params.id.slice(0, 200)}' does not exist or is not ready.`,
        param: 'model',
      });
    }
    res.json(model);
  });
  return router;
}
