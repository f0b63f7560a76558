// Scheduler math against values worked out by hand (python, float64) for a 10-step training
// schedule with a constant beta of 0.1, so ᾱ_t = 0.9^(t+1) and σ_t = √((1 − ᾱ_t) / ᾱ_t).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSchedulerConfig, spacedTimesteps, type SchedulerConfig } from './noise-schedule.js';
import { createScheduler } from './scheduler.js';

const constantBeta = (className: string, extra: Record<string, unknown> = {}): SchedulerConfig =>
  parseSchedulerConfig({
    _class_name: className,
    num_train_timesteps: 10,
    beta_start: 0.1,
    beta_end: 0.1,
    beta_schedule: 'linear',
    ...extra,
  });

const close = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-6, `${what}: ${actual} ≠ ${expected}`);

test('Euler discrete, ε-prediction: timesteps, initial sigma, input scaling and two steps', () => {
  const euler = createScheduler(constantBeta('EulerDiscreteScheduler'), 2);
  assert.deepEqual(euler.timesteps, [9, 0]);
  close(euler.initNoiseSigma, 1.3667377183616616, 'init sigma = σ_9 (linspace)');
  close(euler.scaleModelInput(Float32Array.of(1), 0)[0]!, 0.59049, 'input / √(σ²+1)');
  const x1 = euler.step(Float32Array.of(0.5), 0, Float32Array.of(1));
  close(x1[0]!, 0.48329780748583584, 'x after step 0 (σ_9 → σ_0)');
  const x2 = euler.step(Float32Array.of(0.25), 1, x1);
  close(x2[0]!, 0.3999644741525025, 'x after step 1 (σ_0 → 0)');
});

test('Euler discrete, v-prediction step', () => {
  const euler = createScheduler(
    constantBeta('EulerDiscreteScheduler', { prediction_type: 'v_prediction' }),
    2,
  );
  close(euler.step(Float32Array.of(0.5), 0, Float32Array.of(1))[0]!, 0.20242162099703698, 'x after step 0');
});

test('DDIM (η = 0): leading timesteps, unscaled input, steps to ᾱ_prev and to the final alpha', () => {
  const ddim = createScheduler(constantBeta('DDIMScheduler'), 2);
  assert.deepEqual(ddim.timesteps, [5, 0]);
  assert.equal(ddim.initNoiseSigma, 1);
  const input = Float32Array.of(1);
  assert.equal(ddim.scaleModelInput(input, 0), input);
  close(ddim.step(Float32Array.of(0.5), 0, Float32Array.of(1))[0]!, 1.0140671651943074, 't = 5 → 0');
  close(ddim.step(Float32Array.of(0.5), 1, Float32Array.of(1))[0]!, 0.8874258867227931, 't = 0 → ᾱ = 1');
  const notToOne = createScheduler(constantBeta('DDIMScheduler', { set_alpha_to_one: false }), 2);
  close(notToOne.step(Float32Array.of(0.5), 1, Float32Array.of(1))[0]!, 1, 't = 0 → ᾱ_0 leaves x as it is');
});

test('timestep spacings as diffusers spaces them (1000 training steps)', () => {
  const config = (spacing: string, offset = 0) =>
    parseSchedulerConfig({ _class_name: 'DDIMScheduler', timestep_spacing: spacing, steps_offset: offset });
  assert.deepEqual(spacedTimesteps(config('leading', 1), 4), [751, 501, 251, 1]);
  assert.deepEqual(spacedTimesteps(config('trailing'), 4), [999, 749, 499, 249]);
  assert.deepEqual(spacedTimesteps(config('linspace'), 4), [999, 666, 333, 0]);
  assert.deepEqual(spacedTimesteps(config('linspace'), 1), [0]);
});

test('scheduler_config.json: defaults by class, unsupported settings refused', () => {
  assert.equal(parseSchedulerConfig({}).className, 'EulerDiscreteScheduler');
  assert.equal(parseSchedulerConfig({ _class_name: 'DDIMScheduler' }).timestepSpacing, 'leading');
  assert.equal(parseSchedulerConfig({ _class_name: 'EulerDiscreteScheduler' }).timestepSpacing, 'linspace');
  assert.throws(() => parseSchedulerConfig({ _class_name: 'LMSDiscreteScheduler' }), /_class_name/);
  assert.throws(() => parseSchedulerConfig({ use_karras_sigmas: true }), /karras/);
  assert.throws(() => parseSchedulerConfig({ prediction_type: 'sample' }), /prediction_type/);
  assert.throws(() => createScheduler(parseSchedulerConfig({}), 0));
});
