/**
 * Every route the gateway serves, by where it sits in the middleware chain (server.ts), and all
 * of them in the order the OpenAPI document lists them.
 */
import { adminApiRoutes, adminPageRoutes } from './admin/admin-routes.js';
import type { Route } from './http/route.js';
import { openAiChatCompletionRoute } from './openai/chat-completions.js';
import { openAiCompletionRoute } from './openai/completions.js';
import { openAiGenerateImagesRoute } from './openai/images.js';
import { openAiModelRoutes } from './openai/models.js';
import { openAiTranscribeRoute } from './openai/transcriptions.js';
import { openAiVideoRoutes } from './openai/videos.js';
import { probeRoutes } from './ops/health-routes.js';
import { publicDocsRoutes } from './ops/public-docs.js';
import { animateRoutes } from './routes/animate.js';
import { browserRoutes } from './routes/browser.js';
import { browserSessionDevtoolsRoute } from './routes/browser-devtools.js';
import { generateImageRoute } from './routes/generate-image.js';
import { listModelsRoute } from './routes/models.js';
import { queryRoute } from './routes/query.js';
import { browserScrapeRoute } from './routes/browser-scrape.js';
import {
  getBrowserPdfRoute,
  getBrowserScreenshotRoute,
  getImageRoute,
  videoFileRoutes,
} from './routes/stored-files.js';
import { transcribeRoute } from './routes/transcribe.js';
import { getUsageRoute } from './routes/usage.js';
import { webhookRoutes } from './webhooks/routes.js';
import { liveKeyRoutes, livePublicRoutes } from './live/routes.js';

/** Probes: before every other check, the cluster allowlist included. */
export { probeRoutes };

/** No key: the document, its page and the admin dashboard's files. */
export const publicRoutes: readonly Route[] = [...publicDocsRoutes, ...adminPageRoutes, ...livePublicRoutes];

/** Behind the admin token. */
export { adminApiRoutes };

/** Behind an API key, its IP allowlist, its tier, its rate limit and its model calls at once. */
export const apiKeyRoutes: readonly Route[] = [
  queryRoute,
  listModelsRoute,
  transcribeRoute,
  generateImageRoute,
  getImageRoute,
  ...animateRoutes,
  ...videoFileRoutes,
  ...browserRoutes,
  browserSessionDevtoolsRoute,
  ...liveKeyRoutes,
  getBrowserScreenshotRoute,
  getBrowserPdfRoute,
  browserScrapeRoute,
  getUsageRoute,
  ...webhookRoutes,
  ...openAiModelRoutes,
  openAiCompletionRoute,
  openAiChatCompletionRoute,
  openAiGenerateImagesRoute,
  openAiTranscribeRoute,
  ...openAiVideoRoutes,
];

const isOpenAi = (route: Route) => route.path.startsWith('/v1/');

/** Every route, in the document's order. */
export const allRoutes: readonly Route[] = [
  ...apiKeyRoutes.filter((route) => !isOpenAi(route)),
  ...adminApiRoutes,
  ...adminPageRoutes,
  ...livePublicRoutes,
  ...probeRoutes,
  ...publicDocsRoutes,
  ...apiKeyRoutes.filter(isOpenAi),
];
