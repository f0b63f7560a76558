// One inference run's scheduler: which timesteps the UNet sees, how its input is scaled, and how a
// predicted noise moves the latents one step. Euler discrete and DDIM, as diffusers defines them,
// chosen by scheduler_config.json's _class_name.
import { alphasCumprod, spacedTimesteps, type SchedulerConfig } from './noise-schedule.js';

export interface Scheduler {
  /** Timesteps fed to the UNet, noisiest first; one per step. */
  readonly timesteps: readonly number[];
  /** Standard deviation of the initial latents (unit Gaussian noise is multiplied by it). */
  readonly initNoiseSigma: number;
  /** The UNet's input at step `index` (a scaled copy, or the sample itself). */
  scaleModelInput(sample: Float32Array, index: number): Float32Array;
  /** The latents after step `index`, from the model's prediction at that step. */
  step(modelOutput: Float32Array, index: number, sample: Float32Array): Float32Array;
}

export function createScheduler(config: SchedulerConfig, steps: number): Scheduler {
  if (!Number.isInteger(steps) || steps < 1 || steps > config.trainTimesteps) {
    throw new Error(`steps must be 1..${config.trainTimesteps}`);
  }
  return config.className === 'DDIMScheduler' ? ddim(config, steps) : eulerDiscrete(config, steps);
}

/** Linear interpolation of `table` at fractional index `x` (numpy.interp over 0..n−1). */
function interpolate(table: Float64Array, x: number): number {
  const low = Math.max(0, Math.min(table.length - 1, Math.floor(x)));
  const high = Math.min(table.length - 1, low + 1);
  return table[low]! + (x - low) * (table[high]! - table[low]!);
}

function eulerDiscrete(config: SchedulerConfig, steps: number): Scheduler {
  const alphas = alphasCumprod(config);
  const trainSigmas = alphas.map((a) => Math.sqrt((1 - a) / a));
  const timesteps = spacedTimesteps(config, steps);
  // sigma per step, then 0: the last step lands on the clean sample.
  const sigmas = [...timesteps.map((t) => interpolate(trainSigmas, t)), 0];
  const maxSigma = Math.max(...sigmas);
  return {
    timesteps,
    initNoiseSigma: config.timestepSpacing === 'leading' ? Math.sqrt(maxSigma * maxSigma + 1) : maxSigma,
    scaleModelInput(sample, index) {
      const scale = 1 / Math.sqrt(sigmas[index]! ** 2 + 1);
      return sample.map((x) => x * scale);
    },
    step(modelOutput, index, sample) {
      const sigma = sigmas[index]!;
      const dt = sigmas[index + 1]! - sigma;
      const next = new Float32Array(sample.length);
      for (let i = 0; i < sample.length; i++) {
        const x = sample[i]!;
        const predictedOriginal =
          config.predictionType === 'v_prediction'
            ? modelOutput[i]! * (-sigma / Math.sqrt(sigma * sigma + 1)) + x / (sigma * sigma + 1)
            : x - sigma * modelOutput[i]!;
        // Euler's method on the probability-flow ODE: dx/dsigma = (x − x0) / sigma.
        next[i] = x + ((x - predictedOriginal) / sigma) * dt;
      }
      return next;
    },
  };
}

function ddim(config: SchedulerConfig, steps: number): Scheduler {
  const alphas = alphasCumprod(config);
  const finalAlpha = config.setAlphaToOne ? 1 : alphas[0]!;
  const timesteps = spacedTimesteps(config, steps);
  const stride = Math.floor(config.trainTimesteps / steps);
  return {
    timesteps,
    initNoiseSigma: 1,
    scaleModelInput: (sample) => sample,
    step(modelOutput, index, sample) {
      const t = timesteps[index]!;
      const previous = t - stride;
      const alpha = alphas[t]!;
      const alphaPrevious = previous >= 0 ? alphas[previous]! : finalAlpha;
      const sqrtAlpha = Math.sqrt(alpha);
      const sqrtBeta = Math.sqrt(1 - alpha);
      const next = new Float32Array(sample.length);
      for (let i = 0; i < sample.length; i++) {
        const x = sample[i]!;
        const out = modelOutput[i]!;
        const [predictedOriginal, predictedNoise] =
          config.predictionType === 'v_prediction'
            ? [sqrtAlpha * x - sqrtBeta * out, sqrtAlpha * out + sqrtBeta * x]
            : [(x - sqrtBeta * out) / sqrtAlpha, out];
        // eta = 0: deterministic DDIM, x_{t−1} = √ᾱ_{t−1} x̂0 + √(1 − ᾱ_{t−1}) ε̂.
        next[i] =
          Math.sqrt(alphaPrevious) * predictedOriginal + Math.sqrt(1 - alphaPrevious) * predictedNoise;
      }
      return next;
    },
  };
}
