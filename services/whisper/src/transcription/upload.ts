// The client stream of a Transcribe call, split into what it means: the options (first message,
// possibly amended by more along with or after the data: the form's fields in any order) and the
// upload's bytes in between.
import type { TranscribeChunk__Output, TranscribeOptions__Output } from '@switchboard/contracts';
import { SwitchboardError } from '@switchboard/errors';

export interface UploadOptions {
  language: string;
  model: string;
}

export interface Upload {
  /** From the first message; read it before consuming `data`. */
  readonly options: UploadOptions;
  /** The file's bytes, in order; ends with the call's stream. */
  readonly data: AsyncIterable<Uint8Array>;
  /** The options once the whole stream was read: later non-empty fields replace earlier ones. */
  finalOptions(): UploadOptions;
}

const invalid = (message: string) => new SwitchboardError('invalid_request', { message });

/** Reads the first message (which must be `options`) and hands back the rest as an Upload. */
export async function openUpload(messages: AsyncIterable<TranscribeChunk__Output>): Promise<Upload> {
  const iterator = messages[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done || !first.value.options) throw invalid('The first message must carry the options.');
  const options = pick(first.value.options, { language: '', model: '' });
  let final: UploadOptions | undefined;
  let current = options;

  async function* data(): AsyncIterable<Uint8Array> {
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      if (next.value.data) yield next.value.data;
      else if (next.value.options) current = pick(next.value.options, current);
    }
    final = current;
  }

  return {
    options,
    data: data(),
    finalOptions() {
      if (!final) throw new Error('finalOptions() before the upload was read');
      return final;
    },
  };
}

function pick(message: TranscribeOptions__Output, base: UploadOptions): UploadOptions {
  return {
    language: message.language.trim().toLowerCase() || base.language,
    model: message.model || base.model,
  };
}
