// scheduler/scheduler_config.json as Stable Video Diffusion ships it: Euler discrete over Karras
// sigmas from 700 down to 0.002, v-prediction, and "continuous" timesteps (the UNet sees
// 0.25 · ln σ rather than a training-step index). The training betas are SD's; with Karras sigmas
// and continuous timesteps they no longer decide anything at inference, but diffusers reads them.
import { DIFFUSERS_VERSION } from '../diffusion/config.js';

export function videoSchedulerConfigJson(): object {
  return {
    _class_name: 'EulerDiscreteScheduler',
    _diffusers_version: DIFFUSERS_VERSION,
    beta_end: 0.012,
    beta_schedule: 'scaled_linear',
    beta_start: 0.00085,
    clip_sample: false,
    interpolation_type: 'linear',
    num_train_timesteps: 1000,
    prediction_type: 'v_prediction',
    set_alpha_to_one: false,
    sigma_max: 700.0,
    sigma_min: 0.002,
    skip_prk_steps: true,
    steps_offset: 1,
    timestep_spacing: 'leading',
    timestep_type: 'continuous',
    trained_betas: null,
    use_karras_sigmas: true,
    final_sigmas_type: 'zero',
  };
}
