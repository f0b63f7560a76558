/**
 * What is metered: the one catalogue of capabilities and their meters that the recorder, the
 * queries, the quotas, the OpenAPI document and the dashboard all read.
 */
export const capabilities = ['llm', 'whisper', 'diffusion', 'animation', 'browser'] as const;
export type Capability = (typeof capabilities)[number];

export const metersByCapability = {
  llm: ['requests', 'input_tokens', 'output_tokens'],
  whisper: ['requests', 'audio_seconds'],
  diffusion: ['images', 'megapixel_steps'],
  animation: ['video_seconds', 'video_frames'],
  browser: ['session_seconds', 'captures', 'pdfs', 'scrapes'],
} as const satisfies Record<Capability, readonly string[]>;

export type Meter = (typeof metersByCapability)[Capability][number];

/** Every meter once (`requests` is shared by llm and whisper), in catalogue order. */
export const meters: readonly Meter[] = [...new Set(Object.values(metersByCapability).flat())] as Meter[];

/**
 * Meters whose cost is known before the work starts: a call reserves it against the quota first
 * and settles to the real cost after, so concurrent calls never overshoot. The others can only
 * be counted once the work is done, so a quota on them refuses new work once spent.
 */
export const reservedMeters: readonly Meter[] = [
  'images',
  'megapixel_steps',
  'video_frames',
  'video_seconds',
  'output_tokens',
];

export const isMeter = (value: unknown): value is Meter => (meters as readonly unknown[]).includes(value);
export const isCapability = (value: unknown): value is Capability =>
  (capabilities as readonly unknown[]).includes(value);

/** Amounts per meter; meters a piece of work did not use are absent. */
export type MeterValues = Partial<Record<Meter, number>>;

/**
 * One piece of work's usage. `id` is unique per piece of work and the same whichever replica
 * records it (a retried call, a redelivered job or a second replica seeing the same session all
 * produce the same id), and the store keeps the first record of an id only.
 */
export interface UsageRecord {
  id: string;
  key_id: string;
  capability: Capability;
  /** The model or back-end, where the capability has one; null otherwise. */
  model: string | null;
  /** When the work ended: the bucket its usage lands in. */
  at: Date;
  values: MeterValues;
}
