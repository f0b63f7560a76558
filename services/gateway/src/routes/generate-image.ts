import type { Router } from 'express';
import { exactRouter } from '../http/router.js';
import type { DiffusionWorker } from '../clients/diffusion.js';
import { callContext } from '../clients/call-context.js';
import { jsonBody } from '../http/json-body.js';
import { validate } from '../http/validate.js';
import { GenerateImageRequest } from '../contract/images.js';

/** POST /generate-image (API.md §4). The worker stores the PNG; this answers where to get it. */
export function generateImageRouter(diffusion: DiffusionWorker, bodyLimitBytes: number): Router {
  const router = exactRouter();
  router.post('/generate-image', jsonBody(bodyLimitBytes), async (req, res) => {
    const body = validate(GenerateImageRequest, req.body);
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const image = await diffusion.generate(
      {
        prompt: body.prompt,
        negative_prompt: body.negative_prompt ?? '',
        width: body.width,
        height: body.height,
        steps: body.steps,
        seed: body.seed === undefined ? undefined : String(body.seed),
        guidance_scale: body.guidance_scale,
        model: '',
      },
      callContext(res, abort.signal),
    );
    res.json({
      id: image.image_id,
      url: `/api/images/${image.image_id}.png`,
      width: image.width,
      height: image.height,
      steps: image.steps,
      seed: Number(image.seed),
      model: image.model,
      created: Number(image.created),
    });
  });
  return router;
}
