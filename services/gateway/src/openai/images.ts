import type { Request, Router } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import { imageKey, type ObjectStore } from '@switchboard/objectstore';
import { callContext } from '../clients/call-context.js';
import type { DiffusionWorker } from '../clients/diffusion.js';
import { ImageGenerationRequest } from '../contract/openai.js';
import { jsonBody } from '../http/json-body.js';
import { exactRouter } from '../http/router.js';
import { validate } from '../http/validate.js';

export interface ImageDeps {
  diffusion: DiffusionWorker;
  objects: ObjectStore;
  bodyLimitBytes: number;
  originOf: (req: Request) => string;
}

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
 * POST /v1/images/generations: `n` images generated one after the other (a diffusion worker runs
 * one at a time anyway), each stored like /generate-image's. A seed makes the batch reproducible:
 * image i gets seed + i, so the images differ from each other.
 */
export function imagesRouter(deps: ImageDeps): Router {
  const router = exactRouter();
  router.post('/images/generations', jsonBody(deps.bodyLimitBytes), async (req, res) => {
    const body = validate(ImageGenerationRequest, req.body);
    const [width, height] = (body.size ?? '1024x1024').split('x').map(Number) as [number, number];
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const data: ({ url: string } | { b64_json: string })[] = [];
    for (let i = 0; i < (body.n ?? 1); i++) {
      const image = await deps.diffusion.generate(
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
      data.push(
        body.response_format === 'b64_json'
          ? { b64_json: (await readPng(deps.objects, image.image_id)).toString('base64') }
          : { url: `${deps.originOf(req)}/api/images/${image.image_id}.png` },
      );
    }
    res.json({ created: Math.floor(Date.now() / 1000), data });
  });
  return router;
}
