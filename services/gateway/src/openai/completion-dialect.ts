import type { CompleteResponse__Output } from '@switchboard/contracts';
import type { Completion, CompletionDialect } from '../completion/relay.js';
import { openAiErrorBody } from './errors.js';

/** How one OpenAI endpoint words its one choice: the text one and the chat one differ. */
export interface OpenAiShape {
  idPrefix: string;
  object: string;
  chunkObject: string;
  /** The choice of the whole answer. */
  answer(done: CompleteResponse__Output): object;
  /** The chunk's choice before any text (chat's `delta.role`), if the shape has one. */
  opening?: object;
  piece(text: string): object;
  finish(reason: string): object;
}

/**
 * OpenAI's completion dialect: its objects, its chunks (with a last usage chunk when
 * `stream_options.include_usage` asks for one) and its error body.
 */
export function openAiDialect(shape: OpenAiShape, includeUsage: boolean): CompletionDialect {
  const envelope = ({ id, created }: Completion, object: string, model: string) => ({
    id,
    object,
    created,
    model,
  });
  const chunk = (completion: Completion, model: string, choices: object[]) => ({
    ...envelope(completion, shape.chunkObject, model),
    choices,
  });
  const { opening } = shape;
  return {
    idPrefix: shape.idPrefix,
    whole: (completion, done) => ({
      ...envelope(completion, shape.object, done.model),
      choices: [shape.answer(done)],
      usage: done.usage,
    }),
    ...(opening ? { opening: (completion, model) => chunk(completion, model, [opening]) } : {}),
    piece: (completion, model, text) => chunk(completion, model, [shape.piece(text)]),
    finish: (completion, model, done) => {
      const last = done.model || model;
      const finish = chunk(completion, last, [shape.finish(done.finish_reason)]);
      return includeUsage ? [finish, { ...chunk(completion, last, []), usage: done.usage }] : [finish];
    },
    error: openAiErrorBody,
  };
}
