/** POST /generate-image and the download of what it made. */
import { requestLimits } from '@switchboard/contracts';
import { z } from 'zod';
import { multipleOf } from './responses.js';

const limits = requestLimits.image;
const side = multipleOf(
  z.number().int().min(limits.side.min).max(limits.side.max),
  limits.sideMultiple,
).default(1024);

export const GenerateImageRequest = z
  .object({
    prompt: z.string().min(1, 'must not be empty').max(10_000),
    width: side,
    height: side,
    steps: z.number().int().min(limits.steps.min).max(limits.steps.max).default(20),
    negative_prompt: z.string().max(10_000).optional().meta({ description: 'Extension.' }),
    seed: z
      .number()
      .int()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .meta({ description: 'Same seed + same parameters = same image (extension).' }),
    guidance_scale: z
      .number()
      .min(limits.guidanceScale.min)
      .max(limits.guidanceScale.max)
      .optional()
      .meta({ description: 'Extension.' }),
  })
  .meta({ id: 'GenerateImageRequest' });

export const ImageResult = z
  .object({
    id: z.string().regex(/^img-/),
    url: z.string().meta({ description: '`/api/images/<id>.png`, readable by the same key only.' }),
    width: z.number().int(),
    height: z.number().int(),
    steps: z.number().int(),
    seed: z.number().int().meta({ description: 'The seed used (chosen at random when not given).' }),
    model: z.string(),
    created: z.number().int().meta({ description: 'Unix time, seconds.' }),
  })
  .meta({ id: 'ImageResult' });
