// The training schedule against numbers worked out from diffusers' formulas for Stable Diffusion's
// (and Stable Video Diffusion's) scheduler_config.json: scaled_linear betas from 0.00085 to 0.012
// over 1000 steps.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { alphasCumprod, betas, trainingSigmas, type TrainingNoiseConfig } from './training-noise.js';

const stableDiffusion: TrainingNoiseConfig = {
  trainTimesteps: 1000,
  betaStart: 0.00085,
  betaEnd: 0.012,
  betaSchedule: 'scaled_linear',
};

const close = (actual: number | undefined, expected: number, relative = 1e-6): void =>
  assert.ok(
    actual !== undefined && Math.abs(actual - expected) <= relative * Math.max(1, Math.abs(expected)),
    `${actual} ≉ ${expected}`,
  );

test('scaled_linear betas run linearly in √β from beta_start to beta_end', () => {
  const b = betas(stableDiffusion);
  assert.equal(b.length, 1000);
  close(b[0], 0.00085, 1e-12);
  close(b[999], 0.012, 1e-12);
  close(b[500], (Math.sqrt(0.00085) + (500 / 999) * (Math.sqrt(0.012) - Math.sqrt(0.00085))) ** 2, 1e-12);
});

test('linear betas run linearly in β; trained_betas replace the formula', () => {
  const linear = betas({ ...stableDiffusion, betaSchedule: 'linear', trainTimesteps: 3 });
  assert.deepEqual([...linear], [0.00085, 0.00085 + 0.5 * (0.012 - 0.00085), 0.012]);
  assert.deepEqual([...betas({ ...stableDiffusion, trainedBetas: [0.1, 0.2] })], [0.1, 0.2]);
});

test('alphas_cumprod is the running product of 1 − β', () => {
  const a = alphasCumprod({ ...stableDiffusion, trainedBetas: [0.1, 0.2, 0.5] });
  assert.deepEqual([...a], [0.9, 0.9 * 0.8, 0.9 * 0.8 * 0.5]);
});

test('training sigmas: √((1 − ᾱ)/ᾱ), increasing from 0.029167 to 14.6146', () => {
  const sigmas = trainingSigmas(stableDiffusion);
  close(sigmas[0], 0.0291675, 1e-5);
  close(sigmas[500], 1.6182788, 1e-6);
  close(sigmas[999], 14.6146, 1e-5);
  for (let t = 1; t < sigmas.length; t++) assert.ok(sigmas[t]! > sigmas[t - 1]!);
});
