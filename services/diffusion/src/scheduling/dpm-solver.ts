// DPM-Solver++ multistep (DPMSolverMultistepScheduler, algorithm_type "dpmsolver++"): the model's
// output is turned into a clean-sample estimate x̂0, and each step solves the diffusion ODE in
// λ = log(α/σ) exactly for a x̂0 that is constant (first order) or linear in λ (second order, from
// the previous step's x̂0). Latents are in the variance-preserving form, so the initial sigma is 1
// and the UNet input is not scaled; sigmas still come from the training schedule.
import { trainingSigmas } from '@switchboard/models';
import { roundHalfEven, type SchedulerConfig } from './noise-schedule.js';
import { interpolate, type Scheduler } from './scheduler.js';

/** DPM-Solver's own spacings: linspace and leading divide the schedule into steps + 1 parts. */
export function dpmTimesteps(config: SchedulerConfig, steps: number): number[] {
  const n = config.trainTimesteps;
  switch (config.timestepSpacing) {
    case 'linspace':
      return Array.from({ length: steps }, (_, i) => roundHalfEven(((n - 1) * (steps - i)) / steps));
    case 'leading': {
      const ratio = Math.floor(n / (steps + 1));
      return Array.from({ length: steps }, (_, i) => (steps - i) * ratio + config.stepsOffset);
    }
    case 'trailing': {
      const ratio = n / steps;
      return Array.from({ length: steps }, (_, i) => roundHalfEven(n - i * ratio) - 1);
    }
  }
}

/** (α_t, σ_t) of the VP form from the Karras sigma: α = 1/√(σ² + 1), σ_t = σ·α. */
const alphaSigma = (sigma: number): [number, number] => {
  const alpha = 1 / Math.sqrt(sigma * sigma + 1);
  return [alpha, sigma * alpha];
};
const lambda = (sigma: number): number => {
  const [alpha, s] = alphaSigma(sigma);
  return Math.log(alpha) - Math.log(s);
};

export function dpmSolverMultistep(config: SchedulerConfig, steps: number): Scheduler {
  const train = trainingSigmas(config);
  const timesteps = dpmTimesteps(config, steps);
  // final_sigmas_type "zero": the last step lands on σ = 0, the clean sample.
  const sigmas = [...timesteps.map((t) => interpolate(train, t)), 0];
  const outputs: Float64Array[] = [];
  let lowerOrderSteps = 0;

  return {
    timesteps,
    initNoiseSigma: 1,
    scaleModelInput: (sample) => sample,
    step(modelOutput, index, sample) {
      const [alphaS, sigmaS] = alphaSigma(sigmas[index]!);
      const x0 = new Float64Array(sample.length);
      for (let i = 0; i < sample.length; i++) {
        const x = sample[i]!;
        const out = modelOutput[i]!;
        x0[i] =
          config.predictionType === 'v_prediction' ? alphaS * x - sigmaS * out : (x - sigmaS * out) / alphaS;
      }
      outputs.push(x0);
      if (outputs.length > 2) outputs.shift();

      const last = index === timesteps.length - 1;
      // final_sigmas_type "zero" always ends on a first-order step (σ = 0 has λ = ∞).
      const firstOrder = config.solverOrder === 1 || lowerOrderSteps < 1 || last;
      const [alphaT, sigmaT] = alphaSigma(sigmas[index + 1]!);
      const h = lambda(sigmas[index + 1]!) - lambda(sigmas[index]!);
      const decay = Math.exp(-h) - 1;
      const next = new Float32Array(sample.length);
      if (firstOrder) {
        for (let i = 0; i < sample.length; i++) {
          next[i] = (sigmaT / sigmaS) * sample[i]! - alphaT * decay * x0[i]!;
        }
      } else {
        const h0 = lambda(sigmas[index]!) - lambda(sigmas[index - 1]!);
        const r0 = h0 / h;
        const [m1, m0] = outputs as [Float64Array, Float64Array];
        const d1Weight = config.solverType === 'heun' ? alphaT * (decay / h + 1) : -0.5 * alphaT * decay;
        for (let i = 0; i < sample.length; i++) {
          const d1 = (m0[i]! - m1[i]!) / r0;
          next[i] = (sigmaT / sigmaS) * sample[i]! - alphaT * decay * m0[i]! + d1Weight * d1;
        }
      }
      if (lowerOrderSteps < config.solverOrder) lowerOrderSteps++;
      return next;
    },
  };
}
