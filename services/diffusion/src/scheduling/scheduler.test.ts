// Scheduler math against values worked out independently:
// - a 10-step training schedule with a constant beta of 0.1, so ᾱ_t = 0.9^(t+1) and
//   σ_t = √((1 − ᾱ_t) / ᾱ_t), by hand (python, float64);
// - every supported class on real schedules (diffusers' default linear 0.0001..0.02, and SD 1.5's
//   scaled_linear 0.00085..0.012 with leading spacing and steps_offset 1), from a separate numpy
//   script written from the formulas of diffusers' schedulers/scheduling_{pndm,ddim,
//   euler_discrete,euler_ancestral_discrete,lms_discrete,dpmsolver_multistep}.py (diffusers
//   @ 58eb52c080, read, not run): set_timesteps' spacings, the sigmas, init_noise_sigma, and a
//   whole run of `step` calls in float64 (LMS coefficients integrated exactly with numpy's
//   polyint), with a made-up model ε(x, i) = 0.3·x + 0.2·(i + 1)·[1, −1, 0.5] from
//   x = [1, −0.5, 2]·init_noise_sigma, and fixed ancestral noise [0.3, −0.7, 0.1].
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSchedulerConfig, spacedTimesteps, type SchedulerConfig } from './noise-schedule.js';
import { createScheduler, type Scheduler } from './scheduler.js';

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

/** Runs a scheduler over the made-up model; the latents as the loop leaves them. */
function run(scheduler: Scheduler): number[] {
  let x: Float32Array = Float32Array.of(1, -0.5, 2).map((v) => v * scheduler.initNoiseSigma);
  const direction = [1, -1, 0.5];
  scheduler.timesteps.forEach((_, i) => {
    const input = scheduler.scaleModelInput(x, i);
    const eps = input.map((v, k) => 0.3 * v + 0.2 * (i + 1) * direction[k]!);
    x = scheduler.step(eps, i, x);
  });
  return [...x];
}

const near = (actual: readonly number[], expected: readonly number[], what: string, tolerance = 1e-5) => {
  assert.equal(actual.length, expected.length, what);
  actual.forEach((a, i) =>
    assert.ok(
      Math.abs(a - expected[i]!) <= tolerance * Math.max(1, Math.abs(expected[i]!)),
      `${what}[${i}]: ${a} ≠ ${expected[i]}`,
    ),
  );
};

/** diffusers' defaults for every key but the class (linear 0.0001..0.02, 1000 steps). */
const defaults = (className: string, extra: Record<string, unknown> = {}) =>
  parseSchedulerConfig({ _class_name: className, ...extra });
/** The schedule of the shared SD 1.5 export's scheduler_config.json, under another class name. */
const sd15 = (className: string, extra: Record<string, unknown> = {}) =>
  parseSchedulerConfig({
    _class_name: className,
    beta_start: 0.00085,
    beta_end: 0.012,
    beta_schedule: 'scaled_linear',
    num_train_timesteps: 1000,
    set_alpha_to_one: false,
    skip_prk_steps: true,
    steps_offset: 1,
    timestep_spacing: 'leading',
    clip_sample: false,
    ...extra,
  });
const fixedNoise = () => Float32Array.of(0.3, -0.7, 0.1);

test('PNDM as SD 1.x ships it (skip_prk_steps, leading, offset 1): the first timestep twice, PLMS steps', () => {
  const four = createScheduler(sd15('PNDMScheduler'), 4);
  assert.deepEqual(four.timesteps, [751, 501, 501, 251, 1]);
  assert.equal(four.initNoiseSigma, 1);
  near(run(four), [0.6624224372274082, 0.41698970769141547, 3.569447653370174], 'after 4 steps');
  const six = createScheduler(sd15('PNDMScheduler'), 6);
  assert.deepEqual(six.timesteps, [831, 665, 665, 499, 333, 167, 1]);
  near(
    run(six),
    [0.25975294462993526, 1.1467975485578155, 4.349527951878218],
    'after 6 steps (all four multistep orders)',
  );
});

test("PNDM with diffusers' defaults: four Runge–Kutta warm-up steps, then PLMS", () => {
  const pndm = createScheduler(defaults('PNDMScheduler'), 10);
  assert.deepEqual(
    pndm.timesteps,
    [900, 850, 850, 800, 800, 750, 750, 700, 700, 650, 650, 600, 600, 500, 400, 300, 200, 100, 0],
  );
  near(run(pndm), [-13.135351727046245, 20.074172381580762, 14.248786100080439], 'after 19 UNet calls');
});

test("DDIM with diffusers' defaults (clip_sample, set_alpha_to_one): the clean estimate is clipped", () => {
  const ddim = createScheduler(defaults('DDIMScheduler'), 4);
  assert.deepEqual(ddim.timesteps, [750, 500, 250, 0]);
  near(run(ddim), [0.34518376284457714, -0.021107487839560627, 0.8730611117042941], 'after 4 steps');
});

test("Euler discrete with diffusers' defaults: linspace timesteps, sigmas, initial sigma, a run", () => {
  const euler = createScheduler(defaults('EulerDiscreteScheduler'), 4);
  assert.deepEqual(euler.timesteps, [999, 666, 333, 0]);
  near([euler.initNoiseSigma], [157.40728081040757], 'init sigma = σ_999');
  near(run(euler), [43.61325726352587, -11.84738416421937, 117.10424792968243], 'after 4 steps');
});

test('Euler ancestral: σ_down deterministically, then the noise source times σ_up', () => {
  const ancestral = createScheduler(defaults('EulerAncestralDiscreteScheduler'), 4, fixedNoise);
  assert.deepEqual(ancestral.timesteps, [999, 666, 333, 0]);
  near(run(ancestral), [40.170890215989736, -13.287487615196486, 107.78434217885491], 'after 4 steps');
  let draws = 0;
  const counting = createScheduler(defaults('EulerAncestralDiscreteScheduler'), 4, (n) => {
    draws++;
    return new Float32Array(n);
  });
  run(counting);
  assert.equal(draws, 4, 'one draw per step');
  assert.throws(() => run(createScheduler(defaults('EulerAncestralDiscreteScheduler'), 2)), /noise/);
});

test('LMS discrete (order 4): fractional linspace timesteps, and leading as SD 1.5 configures it', () => {
  const lms = createScheduler(defaults('LMSDiscreteScheduler'), 6);
  near(lms.timesteps, [999.0, 799.2, 599.4000000000001, 399.6, 199.8, 0.0], 'timesteps');
  near(run(lms), [28.22578918480669, -5.358181049217061, 82.71571899917222], 'after 6 steps');
  const leading = createScheduler(sd15('LMSDiscreteScheduler'), 5);
  assert.deepEqual(leading.timesteps, [801, 601, 401, 201, 1]);
  near([leading.initNoiseSigma], [5.2309065084870685], 'init sigma = √(σ_max² + 1) for leading');
  near(run(leading), [1.2199373177110455, 0.15458418928540435, 4.733533179844873], 'after 5 steps');
});

test('DPM-Solver++ 2M: steps + 1 spacing, first order at both ends, midpoint and heun', () => {
  const dpm = createScheduler(defaults('DPMSolverMultistepScheduler'), 5);
  assert.deepEqual(dpm.timesteps, [999, 799, 599, 400, 200]);
  assert.equal(dpm.initNoiseSigma, 1);
  near(run(dpm), [21.36215595389319, -2.6719084196022176, 66.75182057981945], 'midpoint, after 5 steps');
  near(
    run(createScheduler(defaults('DPMSolverMultistepScheduler', { solver_type: 'heun' }), 5)),
    [18.984481420144512, -1.7673680040778765, 61.14358095827215],
    'heun, after 5 steps',
  );
  const leading = createScheduler(sd15('DPMSolverMultistepScheduler'), 4);
  assert.deepEqual(leading.timesteps, [801, 601, 401, 201]);
  near(
    run(leading),
    [1.1428371175458014, 0.20388066899069132, 4.61157191838238],
    'SD 1.5 schedule, after 4 steps',
  );
});

test('scheduler_config.json: defaults by class, unsupported classes and settings refused by name', () => {
  assert.equal(parseSchedulerConfig({}).className, 'EulerDiscreteScheduler');
  assert.equal(defaults('DDIMScheduler').timestepSpacing, 'leading');
  assert.deepEqual(
    [defaults('DDIMScheduler').clipSample, defaults('DDIMScheduler').setAlphaToOne],
    [true, true],
  );
  assert.deepEqual(
    [defaults('PNDMScheduler').skipPrkSteps, defaults('PNDMScheduler').setAlphaToOne],
    [false, false],
  );
  for (const name of ['EulerDiscreteScheduler', 'LMSDiscreteScheduler', 'DPMSolverMultistepScheduler']) {
    assert.equal(defaults(name).timestepSpacing, 'linspace', name);
  }
  assert.throws(
    () => parseSchedulerConfig({ _class_name: 'UniPCMultistepScheduler' }),
    /UniPCMultistepScheduler/,
  );
  assert.throws(() => parseSchedulerConfig({ use_karras_sigmas: true }), /use_karras_sigmas/);
  assert.throws(() => parseSchedulerConfig({ prediction_type: 'sample' }), /prediction_type/);
  assert.throws(
    () => defaults('DPMSolverMultistepScheduler', { algorithm_type: 'sde-dpmsolver++' }),
    /algorithm_type "sde-dpmsolver\+\+"/,
  );
  assert.throws(() => defaults('DPMSolverMultistepScheduler', { solver_order: 3 }), /solver_order 3/);
  assert.throws(() => createScheduler(parseSchedulerConfig({}), 0));
  // Keys an export writes with their neutral values are accepted.
  defaults('EulerDiscreteScheduler', {
    use_karras_sigmas: false,
    sigma_min: null,
    final_sigmas_type: 'zero',
  });
});
