// scheduler/scheduler_config.json with Stable Diffusion 1.5's training noise schedule. Timesteps
// are spaced "leading" with steps_offset 1 (SD 1.5's own setting), which gives whole-number
// timesteps, so the UNet's int64 timestep input receives them exactly, with no truncation.
import { DIFFUSERS_VERSION } from './config.js';

export type SchedulerKind = 'euler' | 'ddim';

const SD15_SCHEDULE = {
  num_train_timesteps: 1000,
  beta_start: 0.00085,
  beta_end: 0.012,
  beta_schedule: 'scaled_linear',
  trained_betas: null,
  prediction_type: 'epsilon',
  timestep_spacing: 'leading',
  steps_offset: 1,
  rescale_betas_zero_snr: false,
};

export function schedulerConfigJson(kind: SchedulerKind): object {
  switch (kind) {
    case 'euler':
      return {
        _class_name: 'EulerDiscreteScheduler',
        _diffusers_version: DIFFUSERS_VERSION,
        ...SD15_SCHEDULE,
        interpolation_type: 'linear',
        use_karras_sigmas: false,
        sigma_min: null,
        sigma_max: null,
        timestep_type: 'discrete',
        final_sigmas_type: 'zero',
      };
    case 'ddim':
      return {
        _class_name: 'DDIMScheduler',
        _diffusers_version: DIFFUSERS_VERSION,
        ...SD15_SCHEDULE,
        clip_sample: false,
        clip_sample_range: 1,
        set_alpha_to_one: false,
        thresholding: false,
        dynamic_thresholding_ratio: 0.995,
        sample_max_value: 1,
      };
  }
}
