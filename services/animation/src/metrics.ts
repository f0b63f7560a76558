import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export function createAnimationMetrics(registry: Registry) {
  const registers = [registry];
  return {
    jobs: new Counter({
      name: 'animation_jobs_total',
      help: 'Attempts ended here, by back-end and how they ended (succeeded, failed, retrying, canceled, released).',
      labelNames: ['backend', 'outcome'],
      registers,
    }),
    running: new Gauge({
      name: 'animation_jobs_running',
      help: 'Jobs running on this worker now.',
      labelNames: ['backend'],
      registers,
    }),
    queueDepth: new Gauge({
      name: 'animation_queue_depth',
      help: 'Jobs waiting in the back-end’s queue (cluster-wide, from the JetStream consumer).',
      labelNames: ['backend'],
      registers,
    }),
    queueAge: new Gauge({
      name: 'animation_queue_oldest_age_seconds',
      help: 'Age of the oldest waiting job of the back-end (0 when none waits).',
      labelNames: ['backend'],
      registers,
    }),
    duration: new Histogram({
      name: 'animation_job_duration_seconds',
      help: 'Time from an attempt’s start to its end, by back-end and outcome.',
      labelNames: ['backend', 'outcome'],
      buckets: [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800],
      registers,
    }),
    framesPerSecond: new Histogram({
      name: 'animation_render_frames_per_second',
      help: 'Frames rendered and encoded per second of a successful attempt.',
      labelNames: ['backend'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 25, 50, 100, 250],
      registers,
    }),
    attempts: new Histogram({
      name: 'animation_job_attempts',
      help: 'Attempts a job took, when it finished here.',
      labelNames: ['backend'],
      buckets: [1, 2, 3, 4, 5, 10],
      registers,
    }),
    vendorErrors: new Counter({
      name: 'animation_vendor_errors_total',
      help: 'Errors from the avatar vendor, by kind (retried ones included).',
      labelNames: ['kind'],
      registers,
    }),
  };
}

export type AnimationMetrics = ReturnType<typeof createAnimationMetrics>;
