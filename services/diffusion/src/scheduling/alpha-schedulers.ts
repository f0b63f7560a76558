// The schedulers that index alphas_cumprod (ᾱ) at whole timesteps, with latents
// x_t = √ᾱ_t·x0 + √(1 − ᾱ_t)·ε and no input scaling: DDIM (η = 0) and PNDM (pseudo linear
// multistep, with or without its four Runge–Kutta warm-up steps). Both step from t to
// t − ⌊T / steps⌋, the last step to the "final" alpha (1, or ᾱ_0 when set_alpha_to_one is false).
import { alphasCumprod } from '@switchboard/models';
import { integerTimesteps, type SchedulerConfig } from './noise-schedule.js';
import type { Scheduler } from './scheduler.js';

export function alphaScheduler(config: SchedulerConfig, steps: number): Scheduler {
  return config.className === 'PNDMScheduler' ? pndm(config, steps) : ddim(config, steps);
}

function ddim(config: SchedulerConfig, steps: number): Scheduler {
  const alphas = alphasCumprod(config);
  const finalAlpha = config.setAlphaToOne ? 1 : alphas[0]!;
  const timesteps = integerTimesteps(config, steps);
  const stride = Math.floor(config.trainTimesteps / steps);
  const clip = (x: number) =>
    config.clipSample ? Math.min(config.clipSampleRange, Math.max(-config.clipSampleRange, x)) : x;
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
        // η = 0: x_{t−1} = √ᾱ_{t−1} x̂0 + √(1 − ᾱ_{t−1}) ε̂, x̂0 clipped when clip_sample is set (ε̂ is not
        // re-derived from the clipped x̂0, as diffusers' pipelines call it).
        next[i] =
          Math.sqrt(alphaPrevious) * clip(predictedOriginal) + Math.sqrt(1 - alphaPrevious) * predictedNoise;
      }
      return next;
    },
  };
}

/** The UNet timesteps of a PNDM run: the PRK warm-up's (unless skipped), then the PLMS steps. */
export function pndmTimesteps(config: SchedulerConfig, steps: number): { prk: number[]; plms: number[] } {
  const ascending = integerTimesteps(config, steps).reverse();
  if (config.skipPrkSteps) {
    // The first PLMS step is taken twice: once plainly, once again with the averaged prediction.
    const plms = [...ascending.slice(0, -1), ...ascending.slice(-2, -1), ...ascending.slice(-1)].reverse();
    return { prk: [], plms };
  }
  const half = Math.floor(Math.floor(config.trainTimesteps / steps) / 2);
  // Each of the four noisiest timesteps and its half-way point, then each of those twice, then
  // trimmed: four Runge–Kutta stages per warm-up step.
  const pairs = ascending.slice(-4).flatMap((t) => [t, t + half]);
  const prk = pairs
    .slice(0, -1)
    .flatMap((t) => [t, t])
    .slice(1, -1)
    .reverse();
  return { prk, plms: ascending.slice(0, -3).reverse() };
}

function pndm(config: SchedulerConfig, steps: number): Scheduler {
  const alphas = alphasCumprod(config);
  const finalAlpha = config.setAlphaToOne ? 1 : alphas[0]!;
  const ratio = Math.floor(config.trainTimesteps / steps);
  const { prk, plms } = pndmTimesteps(config, steps);
  const timesteps = [...prk, ...plms];

  /** x_{t_prev} from x_t and a noise estimate (PNDM's transfer, eq. 9 of the paper). */
  const previousSample = (sample: ArrayLike<number>, t: number, previous: number, eps: ArrayLike<number>) => {
    const alpha = alphas[t]!;
    const alphaPrevious = previous >= 0 ? alphas[previous]! : finalAlpha;
    const beta = 1 - alpha;
    const sampleCoefficient = Math.sqrt(alphaPrevious / alpha);
    const denominator = alpha * Math.sqrt(1 - alphaPrevious) + Math.sqrt(alpha * beta * alphaPrevious);
    const next = new Float32Array(sample.length);
    for (let i = 0; i < sample.length; i++) {
      const x = sample[i]!;
      const e =
        config.predictionType === 'v_prediction' ? Math.sqrt(alpha) * eps[i]! + Math.sqrt(beta) * x : eps[i]!;
      next[i] = sampleCoefficient * x - ((alphaPrevious - alpha) * e) / denominator;
    }
    return next;
  };

  // The state diffusers keeps between steps: past noise estimates, the step counter, the sample a
  // multi-call step restarts from, and the Runge–Kutta running sum.
  let ets: Float64Array[] = [];
  let counter = 0;
  let currentSample: Float32Array | undefined;
  let runningSum: Float64Array | undefined;

  const combine = (weights: readonly number[], divisor: number): Float64Array => {
    const n = ets[0]!.length;
    const out = new Float64Array(n);
    for (let k = 0; k < weights.length; k++) {
      const e = ets[ets.length - 1 - k]!;
      for (let i = 0; i < n; i++) out[i]! += (weights[k]! * e[i]!) / divisor;
    }
    return out;
  };

  const stepPrk = (modelOutput: Float32Array, t: number, sample: Float32Array): Float32Array => {
    const previous = t - (counter % 2 === 1 ? 0 : Math.floor(ratio / 2));
    const from = prk[Math.floor(counter / 4) * 4]!;
    runningSum ??= new Float64Array(sample.length);
    let eps: ArrayLike<number> = modelOutput;
    const stage = counter % 4;
    if (stage === 0) {
      runningSum.forEach((v, i) => (runningSum![i] = v + modelOutput[i]! / 6));
      ets.push(Float64Array.from(modelOutput));
      currentSample = sample;
    } else if (stage === 1 || stage === 2) {
      runningSum.forEach((v, i) => (runningSum![i] = v + modelOutput[i]! / 3));
    } else {
      eps = runningSum.map((v, i) => v + modelOutput[i]! / 6);
      runningSum = new Float64Array(sample.length);
    }
    const next = previousSample(currentSample ?? sample, from, previous, eps);
    counter++;
    return next;
  };

  const stepPlms = (modelOutput: Float32Array, t: number, sample: Float32Array): Float32Array => {
    let previous = t - ratio;
    let from = t;
    if (counter !== 1) {
      ets = ets.slice(-3);
      ets.push(Float64Array.from(modelOutput));
    } else {
      previous = t;
      from = t + ratio;
    }
    let eps: ArrayLike<number>;
    let base = sample;
    if (ets.length === 1 && counter === 0) {
      eps = modelOutput;
      currentSample = sample;
    } else if (ets.length === 1 && counter === 1) {
      eps = modelOutput.map((v, i) => (v + ets[0]![i]!) / 2);
      base = currentSample!;
      currentSample = undefined;
    } else if (ets.length === 2) {
      eps = combine([3, -1], 2);
    } else if (ets.length === 3) {
      eps = combine([23, -16, 5], 12);
    } else {
      eps = combine([55, -59, 37, -9], 24);
    }
    const next = previousSample(base, from, previous, eps);
    counter++;
    return next;
  };

  return {
    timesteps,
    initNoiseSigma: 1,
    scaleModelInput: (sample) => sample,
    step(modelOutput, index, sample) {
      const t = timesteps[index]!;
      return counter < prk.length && !config.skipPrkSteps
        ? stepPrk(modelOutput, t, sample)
        : stepPlms(modelOutput, t, sample);
    },
  };
}
