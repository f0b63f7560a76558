// The training noise schedule every diffusers scheduler starts from (scheduler_config.json) and
// how an inference run spaces its timesteps. Each scheduler class gets diffusers' own defaults for
// the keys a config leaves out; a class or setting this worker cannot run faithfully is refused at
// load, with the key and value named.
import type { TrainingNoiseConfig } from '@switchboard/models';

/** The scheduler classes this worker runs (scheduling/scheduler.ts), as scheduler_config.json names them. */
export const SCHEDULER_CLASSES = [
  'PNDMScheduler',
  'DDIMScheduler',
  'EulerDiscreteScheduler',
  'EulerAncestralDiscreteScheduler',
  'LMSDiscreteScheduler',
  'DPMSolverMultistepScheduler',
] as const;
export type SchedulerClass = (typeof SCHEDULER_CLASSES)[number];

export type BetaSchedule = 'linear' | 'scaled_linear';
export type TimestepSpacing = 'linspace' | 'leading' | 'trailing';
export type PredictionType = 'epsilon' | 'v_prediction';

/**
 * The scheduler_config.json fields this worker honours, with the class's diffusers defaults
 * applied; the training schedule's own (betas, alphas_cumprod, sigmas) come from @switchboard/models.
 */
export interface SchedulerConfig extends TrainingNoiseConfig {
  readonly className: SchedulerClass;
  readonly betaSchedule: BetaSchedule;
  readonly predictionType: PredictionType;
  readonly timestepSpacing: TimestepSpacing;
  readonly stepsOffset: number;
  /** DDIM, PNDM: the "previous" alpha of the last step is 1 (true) or alphas_cumprod[0]. */
  readonly setAlphaToOne: boolean;
  /** DDIM: clamp the predicted clean sample to ±clipSampleRange. */
  readonly clipSample: boolean;
  readonly clipSampleRange: number;
  /** PNDM: plain linear multistep (PLMS) from the start instead of four Runge–Kutta warm-up steps. */
  readonly skipPrkSteps: boolean;
  /**
   * DPM-Solver++: multistep order (1 or 2) and the second-order variant. With final_sigmas_type
   * "zero" (the only one supported) the last step is first order whatever lower_order_final says.
   */
  readonly solverOrder: number;
  readonly solverType: 'midpoint' | 'heun';
}

/** diffusers' defaults per class, for the keys whose default differs between classes. */
const CLASS_DEFAULTS: Record<
  SchedulerClass,
  { timestepSpacing: TimestepSpacing; setAlphaToOne: boolean; clipSample: boolean; skipPrkSteps: boolean }
> = {
  PNDMScheduler: { timestepSpacing: 'leading', setAlphaToOne: false, clipSample: false, skipPrkSteps: false },
  DDIMScheduler: { timestepSpacing: 'leading', setAlphaToOne: true, clipSample: true, skipPrkSteps: false },
  EulerDiscreteScheduler: {
    timestepSpacing: 'linspace',
    setAlphaToOne: false,
    clipSample: false,
    skipPrkSteps: false,
  },
  EulerAncestralDiscreteScheduler: {
    timestepSpacing: 'linspace',
    setAlphaToOne: false,
    clipSample: false,
    skipPrkSteps: false,
  },
  LMSDiscreteScheduler: {
    timestepSpacing: 'linspace',
    setAlphaToOne: false,
    clipSample: false,
    skipPrkSteps: false,
  },
  DPMSolverMultistepScheduler: {
    timestepSpacing: 'linspace',
    setAlphaToOne: false,
    clipSample: false,
    skipPrkSteps: false,
  },
};

/**
 * The training timesteps an inference run of `steps` steps visits, from noisiest to cleanest, as
 * the sigma-based schedulers (Euler, Euler ancestral, LMS) space them: `linspace` gives fractional
 * timesteps (their sigmas are interpolated); the others give integers.
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
      return Array.from({ length: steps }, (_, i) => i * ratio + config.stepsOffset).reverse();
    }
    case 'trailing': {
      const ratio = n / steps;
      return Array.from({ length: steps }, (_, i) => Math.round(n - i * ratio) - 1);
    }
  }
}

/**
 * The same spacings for the schedulers that index alphas_cumprod directly (DDIM, PNDM), which
 * round `linspace` to whole timesteps. Noisiest first.
 */
export function integerTimesteps(config: SchedulerConfig, steps: number): number[] {
  const spaced = spacedTimesteps(config, steps);
  return config.timestepSpacing === 'linspace' ? spaced.map(roundHalfEven) : spaced;
}

/** numpy's round: halves go to the even neighbour. */
export function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

const oneOf = <T extends string>(value: unknown, allowed: readonly T[], fallback: T, name: string): T => {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new Error(
    `scheduler_config.json: ${name} ${JSON.stringify(value)} is not supported (supported: ${allowed.join(', ')})`,
  );
};
const numberOr = (value: unknown, fallback: number): number => (typeof value === 'number' ? value : fallback);
const booleanOr = (value: unknown, fallback: boolean): boolean =>
  typeof value === 'boolean' ? value : fallback;

/** Settings whose non-default values change the math in ways this worker does not implement. */
const REFUSED_WHEN_SET: readonly (readonly [key: string, allowed: unknown])[] = [
  ['use_karras_sigmas', false],
  ['use_exponential_sigmas', false],
  ['use_beta_sigmas', false],
  ['use_lu_lambdas', false],
  ['use_flow_sigmas', false],
  ['thresholding', false],
  ['rescale_betas_zero_snr', false],
  ['use_dynamic_shifting', false],
  ['timestep_type', 'discrete'],
  ['interpolation_type', 'linear'],
  ['final_sigmas_type', 'zero'],
  ['algorithm_type', 'dpmsolver++'],
  ['variance_type', null],
  ['sigma_min', null],
  ['sigma_max', null],
];

/** Reads a diffusers scheduler_config.json; refuses what this worker cannot run faithfully. */
export function parseSchedulerConfig(json: Record<string, unknown>): SchedulerConfig {
  const className = oneOf(json['_class_name'], SCHEDULER_CLASSES, 'EulerDiscreteScheduler', '_class_name');
  for (const [key, allowed] of REFUSED_WHEN_SET) {
    const value = json[key];
    if (value === undefined || value === allowed) continue;
    throw new Error(
      `scheduler_config.json: ${key} ${JSON.stringify(value)} is not supported for ${className} (only ${JSON.stringify(allowed)})`,
    );
  }
  const defaults = CLASS_DEFAULTS[className];
  const trainTimesteps = numberOr(json['num_train_timesteps'], 1000);
  const trained = json['trained_betas'];
  let trainedBetas: number[] | undefined;
  if (trained !== undefined && trained !== null) {
    if (
      !Array.isArray(trained) ||
      trained.length !== trainTimesteps ||
      !trained.every((b) => typeof b === 'number' && b >= 0 && b < 1)
    ) {
      throw new Error('scheduler_config.json: trained_betas must be num_train_timesteps numbers in [0, 1)');
    }
    trainedBetas = trained as number[];
  }
  const solverOrder = numberOr(json['solver_order'], 2);
  if (className === 'DPMSolverMultistepScheduler' && solverOrder !== 1 && solverOrder !== 2) {
    throw new Error(`scheduler_config.json: solver_order ${solverOrder} is not supported (supported: 1, 2)`);
  }
  return {
    className,
    trainTimesteps,
    betaStart: numberOr(json['beta_start'], 0.0001),
    betaEnd: numberOr(json['beta_end'], 0.02),
    betaSchedule: oneOf(
      json['beta_schedule'],
      ['linear', 'scaled_linear'] as const,
      'linear',
      'beta_schedule',
    ),
    ...(trainedBetas ? { trainedBetas } : {}),
    predictionType: oneOf(
      json['prediction_type'],
      ['epsilon', 'v_prediction'] as const,
      'epsilon',
      'prediction_type',
    ),
    timestepSpacing: oneOf(
      json['timestep_spacing'],
      ['linspace', 'leading', 'trailing'] as const,
      defaults.timestepSpacing,
      'timestep_spacing',
    ),
    stepsOffset: numberOr(json['steps_offset'], 0),
    setAlphaToOne: booleanOr(json['set_alpha_to_one'], defaults.setAlphaToOne),
    clipSample: booleanOr(json['clip_sample'], defaults.clipSample),
    clipSampleRange: numberOr(json['clip_sample_range'], 1),
    skipPrkSteps: booleanOr(json['skip_prk_steps'], defaults.skipPrkSteps),
    solverOrder,
    solverType: oneOf(json['solver_type'], ['midpoint', 'heun'] as const, 'midpoint', 'solver_type'),
  };
}
