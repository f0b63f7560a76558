import { GenerateImageRequest, ImageResult } from '../contract/images.js';
import { json, jsonBodyErrors, keyErrors, workerErrors } from '../contract/responses.js';
import { callContext } from '../clients/call-context.js';
import { route } from '../http/route.js';
import { meteringOf } from '../usage/metering-of.js';
import { imageValues } from '../usage/meter-values.js';

/** The worker stores the PNG; the answer says where to get it. */
export const generateImageRoute = route({
  method: 'post',
  path: '/generate-image',
  modelCalls: 'diffusion',
  operationId: 'generateImage',
  tag: 'Images',
  auth: 'apiKey',
  summary: 'Generate an image',
  body: GenerateImageRequest,
  responses: {
    200: {
      description: 'The generated image, stored in the shared object store.',
      content: json(ImageResult),
    },
  },
  errors: [...keyErrors, ...jsonBodyErrors, 'quota_exceeded', 'model_loading', ...workerErrors],
  async handle({ res, body, deps }) {
    const size = { width: body.width, height: body.height, steps: body.steps };
    const metered = await meteringOf(deps).admit(res, {
      capability: 'diffusion',
      reserve: imageValues([size]),
      deadlineMs: deps.config.workers.diffusion.deadlineMs,
    });
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const image = await deps.clients.diffusion.generate(
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
    await metered.record(imageValues([image]), image.model);
    return {
      id: image.image_id,
      url: `/api/images/${image.image_id}.png`,
      width: image.width,
      height: image.height,
      steps: image.steps,
      seed: Number(image.seed),
      model: image.model,
      created: Number(image.created),
    };
  },
});
