// Transcription as the RPC sees it: refuse what can be refused before the upload is read (model
// loading or unknown, bad language, no capacity), decode the upload while it streams in, wait for a
// recognition slot, recognise, and answer segments the gateway can render in any format.
import type { ListModelsResponse, TranscribeChunk__Output, TranscribeResponse } from '@switchboard/contracts';
import { isSwitchboardError, SwitchboardError } from '@switchboard/errors';
import type { RequestContext } from '@switchboard/grpc';
import type { ModelRegistry, WorkQueue } from '@switchboard/models';
import { decodeToPcm } from '../adapters/ffmpeg-decoder.js';
import { durationSeconds, isSilent } from '../audio/pcm.js';
import { toSegments } from '../recognition/segments.js';
import type { SpeechModel } from '../recognition/speech-model.js';
import type { WhisperMetrics } from '../metrics.js';
import { openUpload } from './upload.js';

export interface TranscriptionOptions {
  readonly ffmpegPath: string;
  readonly maxAudioSeconds: number;
  readonly spoolDir: string;
}

export class TranscriptionService {
  constructor(
    private readonly registry: ModelRegistry<SpeechModel>,
    private readonly queue: WorkQueue,
    private readonly metrics: WhisperMetrics,
    private readonly options: TranscriptionOptions,
  ) {}

  async transcribe(
    messages: AsyncIterable<TranscribeChunk__Output>,
    ctx: RequestContext,
  ): Promise<TranscribeResponse> {
    const upload = await openUpload(messages);
    const { id, handle: model } = this.registry.get(upload.options.model);
    checkLanguage(model, upload.options.language);
    if (this.queue.isFull) {
      throw new SwitchboardError('no_capacity', { retryAfterSeconds: this.queue.retryAfterSeconds() });
    }
    let outcome = 'ok';
    try {
      const decodeStarted = performance.now();
      const audio = await decodeToPcm(upload.data, {
        ffmpegPath: this.options.ffmpegPath,
        maxSeconds: this.options.maxAudioSeconds,
        spoolDir: this.options.spoolDir,
        logger: ctx.logger,
        signal: ctx.signal,
      });
      this.metrics.decodeSeconds.observe((performance.now() - decodeStarted) / 1000);
      // Fields sent after the file may change the model or the language.
      const final = upload.finalOptions();
      if (final.model !== upload.options.model && this.registry.resolveId(final.model) !== id) {
        throw new SwitchboardError('invalid_request', {
          message: 'model: must not change after the upload started',
          param: 'model',
        });
      }
      checkLanguage(model, final.language);

      const duration_s = durationSeconds(audio);
      if (isSilent(audio)) {
        ctx.logger.info({ duration_s }, 'silent audio; nothing to transcribe');
        return { text: '', language: final.language, duration_s, segments: [], model: id };
      }
      return await this.queue.run(async () => {
        const started = performance.now();
        const language = final.language || (await model.detectLanguage(audio));
        const recognition = await model.recognize({ audio, language, signal: ctx.signal });
        ctx.signal.throwIfAborted();
        const seconds = (performance.now() - started) / 1000;
        this.metrics.audioSeconds.inc({ model: id }, duration_s);
        this.metrics.realTimeFactor.observe({ model: id }, duration_s / Math.max(seconds, 1e-6));
        ctx.logger.info(
          { duration_s, seconds, language, detected: !final.language, chunks: recognition.chunks.length },
          'transcribed',
        );
        return {
          text: recognition.text.trim(),
          language,
          duration_s,
          segments: toSegments(recognition.chunks, duration_s),
          model: id,
        };
      }, ctx.signal);
    } catch (error) {
      outcome = ctx.signal.aborted ? 'cancelled' : isSwitchboardError(error) ? error.code : 'error';
      throw error;
    } finally {
      this.metrics.requests.inc({ model: id, outcome });
    }
  }

  listModels(): ListModelsResponse {
    return this.registry.listModelsResponse();
  }
}

/** A forced language must be one the model has a token for; empty means detect. */
function checkLanguage(model: SpeechModel, language: string): void {
  if (language && !model.languages.has(language)) {
    throw new SwitchboardError('invalid_request', {
      message: `language: "${language}" is not a language this model knows`,
      param: 'language',
    });
  }
}
