import type { Router } from 'express';
import type { LiveRequests } from '../auth/live-requests.js';
import type { LlmWorker } from '../clients/llm.js';
import type { ModelLister } from '../clients/model-lister.js';
import { exactRouter } from '../http/router.js';
import type { StreamTimings } from '../routes/query.js';
import { chatCompletionsRouter } from './chat-completions.js';
import { completionsRouter } from './completions.js';
import { imagesRouter, type ImageDeps } from './images.js';
import { openAiModelsRouter } from './models.js';
import { transcriptionsRouter } from './transcriptions.js';
import { videosRouter } from './videos.js';
import type { AnimationJobs } from '../clients/animation.js';
import type { WhisperWorker } from '../clients/whisper.js';
import type { TierPolicies } from '@switchboard/keys';

export interface CompletionDeps {
  llm: LlmWorker;
  bodyLimitBytes: number;
  timings: StreamTimings;
  live: LiveRequests;
}

export interface OpenAiDeps extends CompletionDeps, ImageDeps {
  listers: readonly ModelLister[];
  whisper: WhisperWorker;
  tiers: TierPolicies;
  animation: AnimationJobs;
}

/**
 * Everything under /v1: OpenAI's shapes over the same workers. Mounted after authentication,
 * the tier gate and the rate limit, so those apply unchanged; errors leave in OpenAI's body
 * through the gateway's one error handler (http/errors.ts).
 */
export function v1Router(deps: OpenAiDeps): Router {
  const router = exactRouter();
  router.use(openAiModelsRouter(deps.listers));
  router.use(completionsRouter(deps));
  router.use(chatCompletionsRouter(deps));
  router.use(imagesRouter(deps));
  router.use(transcriptionsRouter(deps.whisper, deps.tiers));
  router.use(videosRouter(deps));
  return router;
}
