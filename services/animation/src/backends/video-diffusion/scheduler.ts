// One segment's sampler, diffusers' EulerDiscreteScheduler as SVD configures it: Karras sigmas
// (ρ = 7) from sigma_max down to sigma_min, then the final sigma; the UNet's timestep per step;
// the input scaling 1/√(σ²+1); and the Euler step on the probability-flow ODE. Sigmas are rounded
// to float32 as diffusers stores them, so timesteps and steps use the same numbers it does.
import { trainingSigmas } from '@switchboard/models';
import type { VideoSchedulerConfig } from './scheduler-config.js';

/** Karras et al.'s ρ, fixed in diffusers. */
const RHO = 7;

export interface VideoScheduler {
  /** σ per step, then the final σ (steps + 1 values, decreasing). */
  readonly sigmas: readonly number[];
  /** What the UNet's `timestep` input gets at each step. */
  readonly timesteps: readonly number[];
  /** Standard deviation of the initial latents (unit Gaussian noise is multiplied by it). */
  readonly initNoiseSigma: number;
  /** scale_model_input: the UNet sees the latents times this at step `index`, 1/√(σ²+1). */
  inputScale(index: number): number;
  /** Moves `sample` one step, in place, from the (guided) model output at step `index`; returns it. */
  step(modelOutput: Float32Array, index: number, sample: Float32Array): Float32Array;
}

/**
 * The fractional training step whose σ is `sigma` (diffusers' _sigma_to_t): linear interpolation
 * in log σ between the two neighbouring training steps, clamped to the table.
 */
export function sigmaToTimestep(sigma: number, logSigmas: Float64Array): number {
  const logSigma = Math.log(Math.max(sigma, 1e-10));
  let low = 0;
  for (let i = 0; i < logSigmas.length; i++) if (logSigma - logSigmas[i]! >= 0) low = i;
  low = Math.min(low, logSigmas.length - 2);
  const [lowLog, highLog] = [logSigmas[low]!, logSigmas[low + 1]!];
  const w = Math.min(1, Math.max(0, (lowLog - logSigma) / (lowLog - highLog)));
  return (1 - w) * low + w * (low + 1);
}

/** The Karras schedule: (σmax^(1/ρ) + r · (σmin^(1/ρ) − σmax^(1/ρ)))^ρ for r evenly in [0, 1]. */
export function karrasSigmas(sigmaMin: number, sigmaMax: number, steps: number): number[] {
  const [minInv, maxInv] = [sigmaMin ** (1 / RHO), sigmaMax ** (1 / RHO)];
  return Array.from({ length: steps }, (_, i) => {
    const ramp = steps === 1 ? 0 : i / (steps - 1);
    return (maxInv + ramp * (minInv - maxInv)) ** RHO;
  });
}

export function createVideoScheduler(config: VideoSchedulerConfig, steps: number): VideoScheduler {
  if (!Number.isInteger(steps) || steps < 1)
    throw new Error(`steps must be a positive integer, got ${steps}`);
  const training = trainingSigmas(config);
  const finalSigma = config.finalSigmasType === 'zero' ? 0 : training[0]!;
  const sigmas = [...karrasSigmas(config.sigmaMin, config.sigmaMax, steps), finalSigma].map(Math.fround);
  const logSigmas = training.map(Math.log);
  const timesteps = sigmas
    .slice(0, steps)
    .map((sigma) =>
      config.timestepType === 'continuous'
        ? Math.fround(0.25 * Math.log(sigma))
        : sigmaToTimestep(sigma, logSigmas),
    );
  const maxSigma = Math.max(...sigmas);
  const initNoiseSigma =
    config.timestepSpacing === 'linspace' || config.timestepSpacing === 'trailing'
      ? maxSigma
      : Math.sqrt(maxSigma * maxSigma + 1);
  const vPrediction = config.predictionType === 'v_prediction';

  return {
    sigmas,
    timesteps,
    initNoiseSigma,
    inputScale: (index) => 1 / Math.sqrt(sigmas[index]! ** 2 + 1),
    step(modelOutput, index, sample) {
      const sigma = sigmas[index]!;
      const dt = sigmas[index + 1]! - sigma;
      const variance = sigma * sigma + 1;
      const outScale = -sigma / Math.sqrt(variance);
      for (let i = 0; i < sample.length; i++) {
        const x = sample[i]!;
        // The denoised estimate: c_skip · x + c_out · v for v-prediction, x − σε for epsilon.
        const denoised = vPrediction
          ? modelOutput[i]! * outScale + x / variance
          : x - sigma * modelOutput[i]!;
        // Euler on dx/dσ = (x − denoised)/σ.
        sample[i] = x + ((x - denoised) / sigma) * dt;
      }
      return sample;
    },
  };
}
