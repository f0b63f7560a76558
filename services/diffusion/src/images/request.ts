// A GenerateImage request checked and completed: the worker re-checks what the gateway validated
// (it may be called by other clients), holds the size to the model's pixel budget, and fills in
// the seed and guidance a request left out.
import { randomBytes } from 'node:crypto';
import { requestLimits, type GenerateImageRequest__Output } from '@switchboard/contracts';
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
  const { side, steps, guidanceScale: guidance } = requestLimits.image;
  for (const name of ['width', 'height'] as const) {
    const value = request[name];
    if (value < side.min || value > side.max || value % defaults.sideMultiple !== 0) {
      throw invalid(name, `must be a multiple of ${defaults.sideMultiple} from ${side.min} to ${side.max}`);
    }
  }
  checkPixelBudget(request, defaults.maxPixels, defaults.sideMultiple);
  if (request.steps < steps.min || request.steps > steps.max) {
    throw invalid('steps', `must be ${steps.min} to ${steps.max}`);
  }
  const guidanceScale = request.guidance_scale ?? defaults.guidanceScale;
  if (!(guidanceScale >= guidance.min && guidanceScale <= guidance.max)) {
    throw invalid('guidance_scale', `must be ${guidance.min} to ${guidance.max}`);
  }
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
