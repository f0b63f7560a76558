// scheduler/scheduler_config.json of an SVD-family pipeline: diffusers' EulerDiscreteScheduler
// with Karras sigmas. Only what changes the numbers at inference is kept; a config this back-end
// cannot follow faithfully is refused at load, naming the key, instead of sampling differently.

export type PredictionType = 'epsilon' | 'v_prediction';
/** `continuous`: the UNet sees 0.25 · ln σ (with v-prediction, as diffusers); `discrete`: a step index. */
export type TimestepType = 'continuous' | 'discrete';
export type TimestepSpacing = 'linspace' | 'leading' | 'trailing';

export interface VideoSchedulerConfig {
  readonly predictionType: PredictionType;
  readonly timestepType: TimestepType;
  /** Only decides init_noise_sigma here: √(σmax² + 1) for `leading`, σmax otherwise. */
  readonly timestepSpacing: TimestepSpacing;
  readonly sigmaMin: number;
  readonly sigmaMax: number;
  /** The sigma after the last step: 0, or the training schedule's smallest. */
  readonly finalSigmasType: 'zero' | 'sigma_min';
  /** The training schedule, for discrete timesteps and the `sigma_min` final sigma. */
  readonly trainTimesteps: number;
  readonly betaStart: number;
  readonly betaEnd: number;
  readonly betaSchedule: 'linear' | 'scaled_linear';
}

const oneOf = <T extends string>(
  json: Record<string, unknown>,
  key: string,
  allowed: readonly T[],
  fallback: T,
): T => {
  const value = json[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new Error(
    `scheduler_config.json: ${key} ${JSON.stringify(value)} is not supported (${allowed.join(', ')})`,
  );
};

const positive = (json: Record<string, unknown>, key: string): number => {
  const value = json[key];
  if (typeof value !== 'number' || !(value > 0)) {
    throw new Error(`scheduler_config.json: ${key} must be a positive number with Karras sigmas`);
  }
  return value;
};

const numberOr = (value: unknown, fallback: number): number => (typeof value === 'number' ? value : fallback);

export function parseVideoSchedulerConfig(json: Record<string, unknown>): VideoSchedulerConfig {
  if (json['_class_name'] !== undefined && json['_class_name'] !== 'EulerDiscreteScheduler') {
    throw new Error(
      `scheduler_config.json: ${JSON.stringify(json['_class_name'])} is not supported (EulerDiscreteScheduler)`,
    );
  }
  if (json['use_karras_sigmas'] !== true) {
    throw new Error('scheduler_config.json: only use_karras_sigmas: true (as SVD ships) is supported');
  }
  // Both would change the training schedule that discrete timesteps are read from.
  if (json['trained_betas'] !== undefined && json['trained_betas'] !== null) {
    throw new Error('scheduler_config.json: trained_betas is not supported');
  }
  if (json['rescale_betas_zero_snr'] === true) {
    throw new Error('scheduler_config.json: rescale_betas_zero_snr is not supported');
  }
  const sigmaMin = positive(json, 'sigma_min');
  const sigmaMax = positive(json, 'sigma_max');
  if (sigmaMin >= sigmaMax) throw new Error('scheduler_config.json: sigma_min must be below sigma_max');
  const predictionType = oneOf(json, 'prediction_type', ['epsilon', 'v_prediction'] as const, 'epsilon');
  const declared = oneOf(json, 'timestep_type', ['continuous', 'discrete'] as const, 'discrete');
  return {
    predictionType,
    // diffusers applies 0.25 · ln σ only together with v-prediction, and index timesteps otherwise.
    timestepType: declared === 'continuous' && predictionType === 'v_prediction' ? 'continuous' : 'discrete',
    timestepSpacing: oneOf(
      json,
      'timestep_spacing',
      ['linspace', 'leading', 'trailing'] as const,
      'linspace',
    ),
    sigmaMin,
    sigmaMax,
    finalSigmasType: oneOf(json, 'final_sigmas_type', ['zero', 'sigma_min'] as const, 'zero'),
    trainTimesteps: numberOr(json['num_train_timesteps'], 1000),
    betaStart: numberOr(json['beta_start'], 0.0001),
    betaEnd: numberOr(json['beta_end'], 0.02),
    betaSchedule: oneOf(json, 'beta_schedule', ['linear', 'scaled_linear'] as const, 'linear'),
  };
}
