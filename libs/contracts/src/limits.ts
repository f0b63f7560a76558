/**
 * Bounds of request fields that the gateway validates on HTTP and each worker checks again on
 * gRPC (a worker trusts no caller): written once here, so the two can never disagree. The
 * gateway's route schemas, and through them the OpenAPI document, read these.
 */
export const requestLimits = {
  completion: {
    temperature: { min: 0, max: 2 },
    /** Stop strings per request. */
    stopSequences: 4,
    /**
     * Characters (UTF-16 code units) per stop string: the worker builds a matcher over them for
     * each request, so their size is bounded like their number.
     */
    stopSequenceChars: 500,
    /** Tokens generated when a request names no max_tokens (capped by the model's context). */
    defaultMaxTokens: 2048,
  },
  image: {
    side: { min: 64, max: 2048 },
    /** The API's size grid; a worker may require a coarser one for its model. */
    sideMultiple: 8,
    steps: { min: 1, max: 100 },
    guidanceScale: { min: 0, max: 30 },
  },
  viewport: { min: 100, max: 3840, defaultWidth: 1280, defaultHeight: 720 },
  animation: {
    side: { min: 64, max: 2048 },
    /** Also a multiple of every VAE scale factor in use (8). */
    sideMultiple: 64,
    fps: { min: 1, max: 60 },
    durationS: { min: 0.5, max: 60 },
    defaultFps: 24,
    defaultDurationS: 4,
  },
} as const;
