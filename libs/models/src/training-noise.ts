// The noise schedule a diffusion model was trained with (scheduler_config.json: num_train_timesteps,
// beta_start, beta_end, beta_schedule or trained_betas), which every diffusers scheduler derives
// its steps from: the image worker's schedulers and the video back-end's Karras sampler alike.
// Computed in float64 in one fixed order, so every caller gets the same bits.

/** The scheduler_config.json fields that define the training schedule. */
export interface TrainingNoiseConfig {
  readonly trainTimesteps: number;
  readonly betaStart: number;
  readonly betaEnd: number;
  readonly betaSchedule: 'linear' | 'scaled_linear';
  /** `trained_betas`: explicit betas, which then replace beta_start/end/schedule. */
  readonly trainedBetas?: readonly number[];
}

/** betas[t] for t in 0..n−1 (float64; diffusers keeps them in float32, a difference below 1e-7). */
export function betas(config: TrainingNoiseConfig): Float64Array {
  if (config.trainedBetas) return Float64Array.from(config.trainedBetas);
  const n = config.trainTimesteps;
  const result = new Float64Array(n);
  for (let t = 0; t < n; t++) {
    const fraction = n === 1 ? 0 : t / (n - 1);
    result[t] =
      config.betaSchedule === 'scaled_linear'
        ? (Math.sqrt(config.betaStart) +
            fraction * (Math.sqrt(config.betaEnd) - Math.sqrt(config.betaStart))) **
          2
        : config.betaStart + fraction * (config.betaEnd - config.betaStart);
  }
  return result;
}

/** alphas_cumprod[t] = Π_{s ≤ t} (1 − beta_s). */
export function alphasCumprod(config: TrainingNoiseConfig): Float64Array {
  const b = betas(config);
  const result = new Float64Array(b.length);
  let product = 1;
  for (let t = 0; t < b.length; t++) {
    product *= 1 - b[t]!;
    result[t] = product;
  }
  return result;
}

/** σ_t = √((1 − ᾱ_t) / ᾱ_t) for t = 0 … num_train_timesteps − 1 (increasing): the Karras/Euler view. */
export function trainingSigmas(config: TrainingNoiseConfig): Float64Array {
  return alphasCumprod(config).map((a) => Math.sqrt((1 - a) / a));
}
