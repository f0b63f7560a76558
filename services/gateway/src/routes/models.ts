import type { Router } from 'express';
import type { ModelInfo__Output } from '@switchboard/contracts';
import { exactRouter } from '../http/router.js';
import { callContext, type CallContext } from '../clients/call-context.js';
import type { Capability, ModelLister } from '../clients/model-lister.js';

/**
 * Model lists change only when a model finishes loading, so each worker's answer (or its
 * absence) is kept for a moment: a burst of GET /models costs each worker one call, not one each.
 */
export class CachedModelList {
  private answer: { at: number; models: Promise<ModelInfo__Output[] | null> } | undefined;

  constructor(
    readonly lister: ModelLister,
    private readonly ttlMs: number,
  ) {}

  get(ctx: CallContext): Promise<ModelInfo__Output[] | null> {
    const now = Date.now();
    if (!this.answer || now - this.answer.at > this.ttlMs) {
      this.answer = { at: now, models: this.lister.listModels(ctx).catch(() => null) };
    }
    return this.answer.models;
  }
}

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

/**
 * GET /models: the models of every capability whose worker answers. A worker that is down is
 * left out rather than failing the whole list; /admin shows worker health.
 */
export function modelsRouter(listers: readonly ModelLister[], ttlMs = 2000): Router {
  const router = exactRouter();
  const lists = listers.map((lister) => new CachedModelList(lister, ttlMs));
  router.get('/models', async (_req, res) => {
    const ctx = callContext(res);
    const answers = await Promise.all(
      lists.map(async (list) => ({ capability: list.lister.capability, models: await list.get(ctx) })),
    );
    const data = answers.flatMap(({ capability, models }) =>
      (models ?? []).map((model) => ({
        id: model.id,
        capability,
        status: model.status,
        default: model.is_default,
        development: model.development,
        ...(model.description ? { description: model.description } : {}),
        ...modelFacts(capability, model),
      })),
    );
    res.json({ data });
  });
  return router;
}
