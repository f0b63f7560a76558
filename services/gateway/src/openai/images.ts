import { SwitchboardError } from '@switchboard/errors';
import { imageKey, type ObjectStore } from '@switchboard/objectstore';
import { callContext } from '../clients/call-context.js';
import { ImageGenerationRequest, ImagesResponse, openAiSurface } from '../contract/openai.js';
import { json, jsonBodyErrors, keyErrors, workerErrors } from '../contract/responses.js';
import { route } from '../http/route.js';
import { meteringOf } from '../usage/metering-of.js';
import { imageValues, type ImageSize } from '../usage/meter-values.js';

/** The PNG the worker stored, read back whole for `b64_json`. */
async function readPng(objects: ObjectStore, imageId: string): Promise<Buffer> {
  const stored = await objects.get(imageKey(imageId));
  if (!stored)
    throw new SwitchboardError('upstream_failed', { message: 'The generated image was not stored.' });
  const parts: Buffer[] = [];
  for await (const part of stored.stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/**
 * `n` images, each stored like /generate-image's, asked of the worker together so it can batch
 * them. A seed makes the batch reproducible: image i gets seed + i, so the images differ from
 * each other.
 */
export const openAiGenerateImagesRoute = route({
  method: 'post',
  path: '/v1/images/generations',
  modelCalls: 'diffusion',
  operationId: 'openAiGenerateImages',
  ...openAiSurface,
  summary: 'Generate images (OpenAI shape)',
  description: 'The images are stored like those of POST /generate-image.',
  body: ImageGenerationRequest,
  responses: { 200: { description: 'The images.', content: json(ImagesResponse) } },
  errors: [
    ...keyErrors,
    ...jsonBodyErrors,
    'quota_exceeded',
    'unknown_model',
    'model_loading',
    ...workerErrors,
  ],
  async handle({ req, res, body, deps }) {
    const [width, height] = (body.size ?? '1024x1024').split('x').map(Number) as [number, number];
    const count = body.n ?? 1;
    const steps = body.steps ?? 20;
    // All n images are reserved up front and settled to those generated.
    const metered = await meteringOf(deps).admit(res, {
      capability: 'diffusion',
      model: body.model ?? null,
      reserve: imageValues(Array.from({ length: count }, () => ({ width, height, steps }))),
      deadlineMs: deps.config.workers.diffusion.deadlineMs,
    });
    const generated: ImageSize[] = [];
    let servedBy: string | undefined;
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const generateOne = async (i: number) => {
      const image = await deps.clients.diffusion.generate(
        {
          prompt: body.prompt,
          negative_prompt: '',
          width,
          height,
          steps,
          seed: body.seed === undefined || body.seed === null ? undefined : String(body.seed + i),
          model: body.model ?? '',
        },
        callContext(res, abort.signal),
      );
      generated.push(image);
      servedBy = image.model;
      return body.response_format === 'b64_json'
        ? { b64_json: (await readPng(deps.objects, image.image_id)).toString('base64') }
        : { url: `${deps.originOf(req)}/api/images/${image.image_id}.png` };
    };
    // All at once, so the worker can batch them; the answer keeps the request's order.
    const settled = await Promise.allSettled(Array.from({ length: count }, (_, i) => generateOne(i)));
    // Images made before one failed were work done: they count even though the call fails.
    if (generated.length > 0) await metered.record(imageValues(generated), servedBy);
    const data = settled.map((outcome) => {
      if (outcome.status === 'rejected') throw outcome.reason;
      return outcome.value;
    });
    return { created: Math.floor(Date.now() / 1000), data };
  },
});
