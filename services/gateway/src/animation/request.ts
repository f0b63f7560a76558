// The fields of POST /animate (API.md §5), one schema for JSON bodies and multipart text parts
// (whose values arrive as strings, hence the coercion of numbers there).
import { z } from 'zod';
import { backendNames } from '@switchboard/jobs';

/** Text parts are strings; a number field accepts "24" there and 24 in JSON. */
const number = (multipart: boolean) => (multipart ? z.coerce.number() : z.number());

export function animateFields(multipart: boolean) {
  const n = number(multipart);
  return z.object({
    backend: z.enum(backendNames),
    // In JSON the media are strings (a data: URL or a URL this API returned); in a form they
    // may instead be file parts, which never reach this schema.
    image: multipart ? z.string().optional() : z.string({ error: 'is required' }),
    driving_video: z.string().optional(),
    audio: z.string().optional(),
    text: z.string().min(1).max(5000, 'must be at most 5000 characters').optional(),
    voice: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[\w.:-]+$/, 'expected a vendor voice id')
      .optional(),
    fps: n.int().min(1).max(60).optional(),
    duration_s: n.min(0.5).max(60).optional(),
    seed: n.int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    width: n.int().min(64).max(2048).multipleOf(64, 'must be a multiple of 64').optional(),
    height: n.int().min(64).max(2048).multipleOf(64, 'must be a multiple of 64').optional(),
    motion_bucket_id: n.int().min(1).max(255).default(127),
    noise_aug_strength: n.min(0).max(1).default(0.02),
  });
}

export type AnimateFields = z.output<ReturnType<typeof animateFields>>;

/** The media fields, in the order they are checked and stored. */
export const mediaFields = ['image', 'driving_video', 'audio'] as const;
export type MediaField = (typeof mediaFields)[number];
