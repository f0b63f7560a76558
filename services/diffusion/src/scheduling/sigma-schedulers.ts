// The schedulers that work on sigmas, σ_t = √((1 − ᾱ_t) / ᾱ_t), with latents x = x0 + σ·ε:
// Euler discrete, Euler ancestral and LMS discrete. They share the inference sigmas (the training
// sigmas interpolated at the spaced timesteps, then 0), the initial sigma and the input scaling
// x / √(σ² + 1); they differ in how a step moves from σ_i to σ_{i+1}.
import { trainingSigmas } from '@switchboard/models';
import { spacedTimesteps, type SchedulerConfig } from './noise-schedule.js';
import { interpolate, type NoiseSource, type Scheduler } from './scheduler.js';

/** The clean sample the model's output implies at sigma `sigma` (ε- or v-prediction). */
function predictedOriginal(config: SchedulerConfig, x: number, out: number, sigma: number): number {
  return config.predictionType === 'v_prediction'
    ? out * (-sigma / Math.sqrt(sigma * sigma + 1)) + x / (sigma * sigma + 1)
    : x - sigma * out;
}

/** LMS is fourth order, as diffusers' pipelines call it (step's default `order`). */
const LMS_ORDER = 4;

export function sigmaScheduler(config: SchedulerConfig, steps: number, noise: NoiseSource): Scheduler {
  const train = trainingSigmas(config);
  const timesteps = spacedTimesteps(config, steps);
  // sigma per step, then 0: the last step lands on the clean sample.
  const sigmas = [...timesteps.map((t) => interpolate(train, t)), 0];
  const maxSigma = Math.max(...sigmas);
  const derivatives: Float64Array[] = [];

  const step = (modelOutput: Float32Array, index: number, sample: Float32Array): Float32Array => {
    const sigma = sigmas[index]!;
    const next = sigmas[index + 1]!;
    const derivative = new Float64Array(sample.length);
    for (let i = 0; i < sample.length; i++) {
      const x = sample[i]!;
      // dx/dσ = (x − x̂0) / σ: the probability-flow ODE the samplers integrate.
      derivative[i] = (x - predictedOriginal(config, x, modelOutput[i]!, sigma)) / sigma;
    }
    switch (config.className) {
      case 'EulerAncestralDiscreteScheduler': {
        // Step down to σ_down deterministically, then add fresh noise of σ_up: σ_down² + σ_up² = σ_next².
        const up = Math.sqrt((next * next * (sigma * sigma - next * next)) / (sigma * sigma));
        const down = Math.sqrt(next * next - up * up);
        const fresh = noise(sample.length);
        return sample.map((x, i) => x + derivative[i]! * (down - sigma) + fresh[i]! * up);
      }
      case 'LMSDiscreteScheduler': {
        derivatives.push(derivative);
        if (derivatives.length > LMS_ORDER) derivatives.shift();
        const order = Math.min(index + 1, LMS_ORDER);
        const coefficients = Array.from({ length: order }, (_, k) => lmsCoefficient(sigmas, order, index, k));
        return sample.map((x, i) => {
          let sum = x;
          // The newest derivative pairs with coefficient 0, the one before with 1, …
          for (let k = 0; k < order; k++)
            sum += coefficients[k]! * derivatives[derivatives.length - 1 - k]![i]!;
          return sum;
        });
      }
      default:
        return sample.map((x, i) => x + derivative[i]! * (next - sigma));
    }
  };

  return {
    timesteps,
    initNoiseSigma: config.timestepSpacing === 'leading' ? Math.sqrt(maxSigma * maxSigma + 1) : maxSigma,
    scaleModelInput(sample, index) {
      const scale = 1 / Math.sqrt(sigmas[index]! ** 2 + 1);
      return sample.map((x) => x * scale);
    },
    step,
  };
}

/**
 * The linear multistep coefficient of the derivative `current` steps back: the integral over
 * [σ_t, σ_{t+1}] of the Lagrange basis polynomial through σ_t, σ_{t−1}, … σ_{t−order+1} that is 1
 * at σ_{t−current}. The polynomial has degree ≤ 3, so three-point Gauss–Legendre quadrature
 * (exact to degree 5) gives the integral diffusers computes numerically.
 */
export function lmsCoefficient(sigmas: readonly number[], order: number, t: number, current: number): number {
  const basis = (tau: number): number => {
    let product = 1;
    for (let k = 0; k < order; k++) {
      if (k === current) continue;
      product *= (tau - sigmas[t - k]!) / (sigmas[t - current]! - sigmas[t - k]!);
    }
    return product;
  };
  const a = sigmas[t]!;
  const b = sigmas[t + 1]!;
  const mid = (a + b) / 2;
  const half = (b - a) / 2;
  const node = Math.sqrt(3 / 5);
  return (
    half * ((5 / 9) * basis(mid - half * node) + (8 / 9) * basis(mid) + (5 / 9) * basis(mid + half * node))
  );
}
