// A CompleteRequest as the worker checks it: the gateway validated the shape, only the worker
// knows the model's context and chat template, so the prompt (text or rendered chat), its length
// and max_tokens are checked here.
import { requestLimits, type CompleteRequest__Output } from '@switchboard/contracts';
import { SwitchboardError } from '@switchboard/errors';
import type { GenerationRequest } from '../generation/generation.js';
import type { LanguageModel } from '../generation/model.js';
import { SeededRandom } from '@switchboard/models';
import { promptTokens } from './prompt.js';

/** max_tokens when a request names none, capped by what the context leaves after the prompt. */
export const DEFAULT_MAX_TOKENS = requestLimits.completion.defaultMaxTokens;

export function toGenerationRequest(
  request: CompleteRequest__Output,
  model: LanguageModel,
): GenerationRequest {
  const { ids: promptIds, param } = promptTokens(request, model);
  const room = model.contextLength - promptIds.length;
  if (room < 1) {
    const what = param === 'prompt' ? 'The prompt' : "The chat, rendered with the model's template,";
    throw new SwitchboardError('invalid_request', {
      param,
      message: `${what} is ${promptIds.length} tokens; the model's context is ${model.contextLength}.`,
    });
  }
  let maxTokens = Math.min(DEFAULT_MAX_TOKENS, room);
  if (request.max_tokens !== undefined) {
    if (request.max_tokens < 1) throw new SwitchboardError('invalid_request', { param: 'max_tokens' });
    if (request.max_tokens > room) {
      throw new SwitchboardError('invalid_request', {
        param: 'max_tokens',
        message: `max_tokens is above the model's context: at most ${room} with this ${promptIds.length}-token prompt (context ${model.contextLength}).`,
      });
    }
    maxTokens = request.max_tokens;
  }
  const { temperature } = request;
  const bounds = requestLimits.completion.temperature;
  if (!(temperature >= bounds.min && temperature <= bounds.max)) {
    throw new SwitchboardError('invalid_request', { param: 'temperature' });
  }
  const topP = request.top_p ?? 1;
  if (!(topP > 0 && topP <= 1)) throw new SwitchboardError('invalid_request', { param: 'top_p' });
  const { stopSequences, stopSequenceChars } = requestLimits.completion;
  if (
    request.stop.length > stopSequences ||
    request.stop.some((s) => s === '' || s.length > stopSequenceChars)
  ) {
    throw new SwitchboardError('invalid_request', { param: 'stop' });
  }
  return {
    promptIds,
    maxTokens,
    temperature,
    topP,
    seed: request.seed === undefined ? SeededRandom.randomSeed() : BigInt(request.seed),
    stop: request.stop,
  };
}
