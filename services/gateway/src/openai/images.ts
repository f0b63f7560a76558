import { SwitchboardError } from '@switchboard/errors';
import { imageKey, type ObjectStore } from '@switchboard/objectstore';
import { callContext } from '../clients/call-context.js';
import { ImageGenerationRequest, ImagesResponse, openAiSurface } from '../contract/openai.js';
import { json, jsonBodyErrors, keyErrors, workerErrors } from '../contract/responses.js';
import { route } from '../http/route.js';

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
  errors: [...keyErrors, ...jsonBodyErrors, 'unknown_model', 'model_loading', ...workerErrors],
  async handle({ req, res, body, deps }) {
    const [width, height] = (body.size ?? '1024x1024').split('x').map(Number) as [number, number];
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const generateOne = async (i: number) => {
      const image = await deps.clients.diffusion.generate(
        {
          prompt: body.prompt,
          negative_prompt: '',
          width,
          height,
          steps: body.steps ?? 20,
          seed: body.seed === undefined || body.seed === null ? undefined : String(body.seed + i),
          model: body.model ?? '',
        },
        callContext(res, abort.signal),
      );
      return body.response_format === 'b64_json'
        ? { b64_json: (await readPng(deps.objects, image.image_id)).toString('base64') }
        : { url: `${deps.originOf(req)}/api/images/${image.image_id}.png` };
    };
    // All at once, so the worker can batch them; the answer keeps the request's order.
    const data = await Promise.all(Array.from({ length: body.n ?? 1 }, (_, i) => generateOne(i)));
    return { created: Math.floor(Date.now() / 1000), data };
  },
});
