// A GenerateImage request checked and completed: the worker re-checks what the gateway validated
// (it may be called by other clients), holds the size to the model's pixel budget, and fills in
// the seed and guidance a request left out.
import { randomBytes } from 'node:crypto';
import type { GenerateImageRequest__Output } from '@switchboard/contracts';
import { SwitchboardError } from '@switchboard/errors';
import type { ImageRequest } from '../generation/denoise.js';
import { checkPixelBudget } from './pixel-budget.js';

const invalid = (param: string, message: string) =>
  new SwitchboardError('invalid_request', { message: `${param}: ${message}`, param });

/** A seed for requests that gave none, within what JSON clients can hold exactly (2^53). */
export function randomSeed(): bigint {
  return randomBytes(8).readBigUInt64BE() >> 11n;
}

export function toImageRequest(
  request: GenerateImageRequest__Output,
  defaults: { guidanceScale: number; sideMultiple: number; maxPixels: number },
): ImageRequest {
  if (request.prompt.trim() === '') throw invalid('prompt', 'must not be empty');
  for (const side of ['width', 'height'] as const) {
    const value = request[side];
    if (value < 64 || value > 2048 || value % defaults.sideMultiple !== 0) {
      throw invalid(side, `must be a multiple of ${defaults.sideMultiple} from 64 to 2048`);
    }
  }
  checkPixelBudget(request, defaults.maxPixels, defaults.sideMultiple);
  if (request.steps < 1 || request.steps > 100) throw invalid('steps', 'must be 1 to 100');
  const guidanceScale = request.guidance_scale ?? defaults.guidanceScale;
  if (!(guidanceScale >= 0 && guidanceScale <= 30)) throw invalid('guidance_scale', 'must be 0 to 30');
  let seed: bigint;
  try {
    seed = request.seed === undefined ? randomSeed() : BigInt(request.seed);
  } catch {
    throw invalid('seed', 'must be an integer');
  }
  if (seed < 0n) throw invalid('seed', 'must not be negative');
  return {
    prompt: request.prompt,
    negativePrompt: request.negative_prompt,
    width: request.width,
    height: request.height,
    steps: request.steps,
    seed,
    guidanceScale,
  };
}
