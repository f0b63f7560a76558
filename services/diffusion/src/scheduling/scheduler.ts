// One inference run's scheduler: which timesteps the UNet sees, how its input is scaled, and how a
// prediction moves the latents one step. The classes a diffusers scheduler_config.json names, with
// the formulas of diffusers' own implementations (schedulers/scheduling_*.py):
//
//   PNDMScheduler                    alpha-schedulers.ts (PLMS, with or without the PRK warm-up)
//   DDIMScheduler                    alpha-schedulers.ts (η = 0)
//   EulerDiscreteScheduler           sigma-schedulers.ts
//   EulerAncestralDiscreteScheduler  sigma-schedulers.ts (draws noise every step)
//   LMSDiscreteScheduler             sigma-schedulers.ts (order 4)
//   DPMSolverMultistepScheduler      dpm-solver.ts (DPM-Solver++, order 1 or 2)
//
// Schedulers with memory (PNDM, LMS, DPM-Solver) must be stepped once per index, in order.
import { alphaScheduler } from './alpha-schedulers.js';
import { dpmSolverMultistep } from './dpm-solver.js';
import type { SchedulerConfig } from './noise-schedule.js';
import { sigmaScheduler } from './sigma-schedulers.js';

export interface Scheduler {
  /** Timesteps fed to the UNet, noisiest first; one per UNet call (PNDM visits one twice). */
  readonly timesteps: readonly number[];
  /** Standard deviation of the initial latents (unit Gaussian noise is multiplied by it). */
  readonly initNoiseSigma: number;
  /** The UNet's input at step `index` (a scaled copy, or the sample itself). */
  scaleModelInput(sample: Float32Array, index: number): Float32Array;
  /** The latents after step `index`, from the model's prediction at that step. */
  step(modelOutput: Float32Array, index: number, sample: Float32Array): Float32Array;
}

/** `count` standard normal samples: the noise ancestral schedulers add at each step. */
export type NoiseSource = (count: number) => Float32Array;

const noNoise: NoiseSource = () => {
  throw new Error('this scheduler draws noise at each step and was given no noise source');
};

/**
 * The scheduler for a run of `steps` inference steps. `noise` feeds the schedulers that add noise
 * while sampling (Euler ancestral); the others never call it.
 */
export function createScheduler(
  config: SchedulerConfig,
  steps: number,
  noise: NoiseSource = noNoise,
): Scheduler {
  if (!Number.isInteger(steps) || steps < 1 || steps > config.trainTimesteps) {
    throw new Error(`steps must be 1..${config.trainTimesteps}`);
  }
  switch (config.className) {
    case 'PNDMScheduler':
    case 'DDIMScheduler':
      return alphaScheduler(config, steps);
    case 'EulerDiscreteScheduler':
    case 'EulerAncestralDiscreteScheduler':
    case 'LMSDiscreteScheduler':
      return sigmaScheduler(config, steps, noise);
    case 'DPMSolverMultistepScheduler':
      return dpmSolverMultistep(config, steps);
  }
}

/** Linear interpolation of `table` at fractional index `x` (numpy.interp over 0..n−1). */
export function interpolate(table: Float64Array, x: number): number {
  const low = Math.max(0, Math.min(table.length - 1, Math.floor(x)));
  const high = Math.min(table.length - 1, low + 1);
  return table[low]! + (x - low) * (table[high]! - table[low]!);
}
