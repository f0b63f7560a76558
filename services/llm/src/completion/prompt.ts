// The prompt of a CompleteRequest as token ids: its `prompt` text, or its chat `messages`
// rendered with the model's own chat template — never a format made up here. A rendered chat
// already holds the special tokens its template wrote (a `{{ bos_token }}`), so it is encoded
// without adding them again, as Transformers.js's apply_chat_template does.
import type { CompleteRequest__Output } from '@switchboard/contracts';
import { SwitchboardError } from '@switchboard/errors';
import type { LanguageModel } from '../generation/model.js';

/** The roles of a chat's messages (`/v1/chat/completions`); each goes to the template as written. */
export const CHAT_ROLES: ReadonlySet<string> = new Set(['system', 'developer', 'user', 'assistant']);

export interface PromptTokens {
  readonly ids: number[];
  /** The request field the prompt came from, for errors about its length. */
  readonly param: 'prompt' | 'messages';
}

export function promptTokens(request: CompleteRequest__Output, model: LanguageModel): PromptTokens {
  const { prompt, messages } = request;
  if (messages.length === 0) {
    if (prompt === '') throw new SwitchboardError('invalid_request', { param: 'prompt' });
    return { ids: model.encode(prompt), param: 'prompt' };
  }
  if (prompt !== '') {
    throw new SwitchboardError('invalid_request', {
      param: 'prompt',
      message: 'Send either a prompt or chat messages, not both.',
    });
  }
  const bad = messages.findIndex((m) => !CHAT_ROLES.has(m.role));
  if (bad >= 0) {
    throw new SwitchboardError('invalid_request', {
      param: 'messages',
      message: `messages[${bad}].role must be one of: ${[...CHAT_ROLES].join(', ')}.`,
    });
  }
  const template = model.chatTemplate;
  if (template === undefined) {
    throw new SwitchboardError('invalid_request', {
      param: 'model',
      message: `The model ${model.id} has no chat template (tokenizer_config.json chat_template), so it cannot take chat messages; send a prompt instead.`,
    });
  }
  const ids = model.encode(template.render(messages), { addSpecialTokens: false });
  if (ids.length === 0) {
    throw new SwitchboardError('invalid_request', {
      param: 'messages',
      message: "The model's chat template rendered these messages as an empty prompt.",
    });
  }
  return { ids, param: 'messages' };
}
