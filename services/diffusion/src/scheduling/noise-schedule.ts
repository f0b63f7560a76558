// The training noise schedule every diffusers scheduler starts from (scheduler_config.json):
// betas over num_train_timesteps, and the cumulative products of (1 − beta) the step formulas use.

export type BetaSchedule = 'linear' | 'scaled_linear';
export type TimestepSpacing = 'linspace' | 'leading' | 'trailing';
export type PredictionType = 'epsilon' | 'v_prediction';

/** The scheduler_config.json fields this worker honours, with diffusers' defaults applied. */
export interface SchedulerConfig {
  readonly className: 'EulerDiscreteScheduler' | 'DDIMScheduler';
  readonly trainTimesteps: number;
  readonly betaStart: number;
  readonly betaEnd: number;
  readonly betaSchedule: BetaSchedule;
  readonly predictionType: PredictionType;
  readonly timestepSpacing: TimestepSpacing;
  readonly stepsOffset: number;
  /** DDIM: the "previous" alpha of the last step is 1 (true) or alphas_cumprod[0]. */
  readonly setAlphaToOne: boolean;
}

/** alphas_cumprod[t] = Π_{s ≤ t} (1 − beta_s). */
export function alphasCumprod(config: SchedulerConfig): Float64Array {
  const n = config.trainTimesteps;
  const result = new Float64Array(n);
  let product = 1;
  for (let t = 0; t < n; t++) {
    const fraction = n === 1 ? 0 : t / (n - 1);
    const beta =
      config.betaSchedule === 'scaled_linear'
        ? (Math.sqrt(config.betaStart) +
            fraction * (Math.sqrt(config.betaEnd) - Math.sqrt(config.betaStart))) **
          2
        : config.betaStart + fraction * (config.betaEnd - config.betaStart);
    product *= 1 - beta;
    result[t] = product;
  }
  return result;
}

/**
 * The training timesteps an inference run of `steps` steps visits, from noisiest to cleanest, as
 * diffusers spaces them. `linspace` gives fractional timesteps (Euler interpolates its sigmas);
 * the others give integers.
 */
export function spacedTimesteps(config: SchedulerConfig, steps: number): number[] {
  const n = config.trainTimesteps;
  switch (config.timestepSpacing) {
    case 'linspace':
      return Array.from({ length: steps }, (_, i) =>
        steps === 1 ? 0 : ((n - 1) * i) / (steps - 1),
      ).reverse();
    case 'leading': {
      const ratio = Math.floor(n / steps);
      return Array.from({ length: steps }, (_, i) => Math.round(i * ratio) + config.stepsOffset).reverse();
    }
    case 'trailing': {
      const ratio = n / steps;
      return Array.from({ length: steps }, (_, i) => Math.round(n - i * ratio) - 1);
    }
  }
}

const oneOf = <T extends string>(value: unknown, allowed: readonly T[], fallback: T, name: string): T => {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new Error(
    `scheduler_config.json: ${name} ${JSON.stringify(value)} is not supported (${allowed.join(', ')})`,
  );
};
const numberOr = (value: unknown, fallback: number): number => (typeof value === 'number' ? value : fallback);

/** Reads a diffusers scheduler_config.json; refuses what this worker cannot run faithfully. */
export function parseSchedulerConfig(json: Record<string, unknown>): SchedulerConfig {
  const className = oneOf(
    json['_class_name'],
    ['EulerDiscreteScheduler', 'DDIMScheduler'] as const,
    'EulerDiscreteScheduler',
    '_class_name',
  );
  if (json['use_karras_sigmas'] === true)
    throw new Error('scheduler_config.json: use_karras_sigmas is not supported');
  if (json['clip_sample'] === true) throw new Error('scheduler_config.json: clip_sample is not supported');
  return {
    className,
    trainTimesteps: numberOr(json['num_train_timesteps'], 1000),
    betaStart: numberOr(json['beta_start'], 0.0001),
    betaEnd: numberOr(json['beta_end'], 0.02),
    betaSchedule: oneOf(
      json['beta_schedule'],
      ['linear', 'scaled_linear'] as const,
      'linear',
      'beta_schedule',
    ),
    predictionType: oneOf(
      json['prediction_type'],
      ['epsilon', 'v_prediction'] as const,
      'epsilon',
      'prediction_type',
    ),
    timestepSpacing: oneOf(
      json['timestep_spacing'],
      ['linspace', 'leading', 'trailing'] as const,
      className === 'DDIMScheduler' ? 'leading' : 'linspace',
      'timestep_spacing',
    ),
    stepsOffset: numberOr(json['steps_offset'], 0),
    setAlphaToOne: json['set_alpha_to_one'] !== false,
  };
}
