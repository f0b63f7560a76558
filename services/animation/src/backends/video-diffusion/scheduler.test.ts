// The Euler/Karras scheduler against numbers worked out by hand from diffusers' formulas for SVD's
// scheduler_config.json (σmin 0.002, σmax 700, ρ 7, v-prediction, continuous timesteps, leading
// spacing), the config checks, and the per-frame guidance ramp.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { frameGuidanceScales } from './denoise.js';
import { parseVideoSchedulerConfig } from './scheduler-config.js';
import { trainingSigmas } from '@switchboard/models';
import { createVideoScheduler, sigmaToTimestep } from './scheduler.js';

const SVD_CONFIG = {
  _class_name: 'EulerDiscreteScheduler',
  beta_end: 0.012,
  beta_schedule: 'scaled_linear',
  beta_start: 0.00085,
  num_train_timesteps: 1000,
  prediction_type: 'v_prediction',
  sigma_max: 700.0,
  sigma_min: 0.002,
  steps_offset: 1,
  timestep_spacing: 'leading',
  timestep_type: 'continuous',
  trained_betas: null,
  use_karras_sigmas: true,
};
const svd = parseVideoSchedulerConfig(SVD_CONFIG);

const close = (actual: number | undefined, expected: number, relative = 1e-6): void =>
  assert.ok(
    actual !== undefined && Math.abs(actual - expected) <= relative * Math.max(1, Math.abs(expected)),
    `${actual} ≉ ${expected}`,
  );

test('Karras sigmas: σmax first, σmin last, then 0; the middle of 3 steps is ((σmax^⅐ + σmin^⅐)/2)^7', () => {
  const three = createVideoScheduler(svd, 3);
  // 700^(1/7) = e^(ln 700 / 7) = 2.549427; 0.002^(1/7) = 0.411560; their mean 1.480493; ^7 = 15.58997.
  assert.equal(three.sigmas.length, 4);
  close(three.sigmas[0], 700);
  close(three.sigmas[1], 15.58997, 1e-5);
  close(three.sigmas[2], 0.002);
  assert.equal(three.sigmas[3], 0);
  const many = createVideoScheduler(svd, 25);
  assert.equal(many.sigmas.length, 26);
  // Second of 25: (2.549427 + (1/24)·(0.411560 − 2.549427))^7 = 2.460349^7 = 545.729.
  close(many.sigmas[1], 545.7292, 1e-5);
  for (let i = 1; i < many.sigmas.length; i++) assert.ok(many.sigmas[i]! < many.sigmas[i - 1]!);
  // One step: linspace(0, 1, 1) = [0], so only σmax.
  assert.deepEqual(createVideoScheduler(svd, 1).sigmas, [700, 0]);
});

test('continuous timesteps are 0.25 · ln σ; the initial noise is √(σmax² + 1) for leading spacing; input scale 1/√(σ²+1)', () => {
  const s = createVideoScheduler(svd, 3);
  assert.equal(s.timesteps.length, 3);
  close(s.timesteps[0], 1.6377701, 1e-6); // ln 700 = 6.551080 → 1.637770
  close(s.timesteps[1], 0.6866569, 1e-5); // ln 15.58997 = 2.746628 → 0.686657
  close(s.timesteps[2], -1.553652, 1e-6); // ln 0.002 = −6.214608 → −1.553652
  close(s.initNoiseSigma, 700.000714, 1e-9);
  close(s.inputScale(0), 1 / 700.000714, 1e-6);
  close(s.inputScale(2), 1 / Math.sqrt(1 + 0.002 ** 2), 1e-9);
  // linspace or trailing spacing: σmax itself.
  const linspace = parseVideoSchedulerConfig({ ...SVD_CONFIG, timestep_spacing: 'linspace' });
  assert.equal(createVideoScheduler(linspace, 3).initNoiseSigma, 700);
});

test('v-prediction step: denoised = −σ/√(σ²+1) · v + x/(σ²+1), then Euler to the next sigma', () => {
  // One step goes from σ = 700 straight to 0, so the result is the denoised estimate itself:
  // x = 2, v = 0.5 → −0.5 · 700/700.000714 + 2/490001 = −0.4999995 + 0.0000041 = −0.4999954.
  const one = createVideoScheduler(svd, 1);
  const x = Float32Array.of(2);
  one.step(Float32Array.of(0.5), 0, x);
  close(x[0], -0.4999954, 1e-6);
  // Two steps (700 → 0.002 → 0), first step: d = x/(σ²+1) for v = 0; x' = x + (x − d)/σ · (0.002 − 700).
  const two = createVideoScheduler(svd, 2);
  const y = Float32Array.of(1);
  two.step(Float32Array.of(0), 0, y);
  const d = 1 / 490001;
  close(y[0], 1 + ((1 - d) / 700) * (0.002 - 700), 1e-6);
});

test('epsilon prediction and discrete timesteps: x − σε, and the training step of each sigma', () => {
  const config = parseVideoSchedulerConfig({ ...SVD_CONFIG, prediction_type: 'epsilon' });
  // diffusers uses 0.25 · ln σ only with v-prediction; otherwise timesteps are training steps.
  assert.equal(config.timestepType, 'discrete');
  const s = createVideoScheduler(config, 3);
  // σ = 700 is above the largest training sigma (14.6146 at step 999): clamped to 999;
  // σ = 0.002 is below the smallest (0.029167 at step 0): clamped to 0.
  close(s.timesteps[0], 999);
  close(s.timesteps[2], 0);
  const x = Float32Array.of(3);
  createVideoScheduler(config, 1).step(Float32Array.of(0.002), 0, x);
  close(x[0], 3 - 700 * 0.002, 1e-6);
  // A training sigma maps back to its own step; halfway in log σ maps halfway between steps.
  const logSigmas = trainingSigmas(config).map(Math.log);
  close(trainingSigmas(config)[500], 1.6182788, 1e-6);
  close(sigmaToTimestep(1.6182788, logSigmas), 500, 1e-5);
  close(sigmaToTimestep(Math.exp((logSigmas[500]! + logSigmas[501]!) / 2), logSigmas), 500.5, 1e-6);
});

test('configs this back-end cannot follow are refused, naming the key', () => {
  const refuse = (changes: Record<string, unknown>, pattern: RegExp) =>
    assert.throws(() => parseVideoSchedulerConfig({ ...SVD_CONFIG, ...changes }), pattern);
  refuse({ use_karras_sigmas: false }, /use_karras_sigmas/);
  refuse({ sigma_max: null }, /sigma_max/);
  refuse({ prediction_type: 'sample' }, /prediction_type/);
  refuse({ _class_name: 'DDIMScheduler' }, /DDIMScheduler/);
  refuse({ trained_betas: [0.1] }, /trained_betas/);
  assert.throws(() => createVideoScheduler(svd, 0), /steps/);
});

test('guidance rises linearly across the frames of a pass, torch.linspace(min, max, frames)', () => {
  assert.deepEqual([...frameGuidanceScales({ min: 1, max: 3 }, 5)], [1, 1.5, 2, 2.5, 3]);
  const eight = frameGuidanceScales({ min: 1, max: 3 }, 8);
  close(eight[1], 1 + 2 / 7);
  assert.equal(eight[7], 3);
  assert.deepEqual([...frameGuidanceScales({ min: 1, max: 3 }, 1)], [1]);
});
