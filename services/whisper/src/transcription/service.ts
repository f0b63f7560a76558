// Transcription as the RPC sees it: refuse what can be refused before the upload is read (model
// loading or unknown, bad language, no capacity), then decode the upload while it streams in and
// recognise it window by window as ffmpeg produces them, and answer segments the gateway can render
// in any format. An upload holds a place from its first byte to its answer, so uploads being decoded
// count against the queue; each holds a few windows of samples (those in flight), so memory does
// not grow with length.
import type { ListModelsResponse, TranscribeChunk__Output, TranscribeResponse } from '@switchboard/contracts';
import { isSwitchboardError, SwitchboardError } from '@switchboard/errors';
import type { RequestContext } from '@switchboard/grpc';
import { WorkQueue, type ModelRegistry } from '@switchboard/models';
import { decodePcm } from '../adapters/ffmpeg-decoder.js';
import { ByteBudget } from '../audio/byte-budget.js';
import { durationSeconds, SAMPLE_RATE } from '../audio/pcm.js';
import type { Spool } from '../audio/upload-source.js';
import type { WindowRecognizer } from '../recognition/recognition-queue.js';
import { recognizeWindows } from '../recognition/recognize-windows.js';
import { toSegments } from '../recognition/segments.js';
import type { SpeechModel } from '../recognition/speech-model.js';
import { streamWindows, type WindowSamples, type Windowing } from '../recognition/windows.js';
import type { WhisperMetrics } from '../metrics.js';
import { openUpload, type Upload } from './upload.js';

export interface TranscriptionOptions {
  readonly ffmpegPath: string;
  readonly maxAudioSeconds: number;
  readonly spoolDir: string;
  readonly spoolMaxBytes: number;
  readonly windowing: Windowing;
  /** Uploads in progress at once (recognition concurrency + queue depth); beyond → no_capacity. */
  readonly maxUploads: number;
  /** Windows of one upload recognised or waiting at once (the batch size: one file fills a pass). */
  readonly windowsInFlight: number;
}

export class TranscriptionService {
  /** One place per upload in progress, from its first byte to its answer. */
  private readonly uploads: WorkQueue;
  private readonly spool: Spool;

  constructor(
    private readonly registry: ModelRegistry<SpeechModel>,
    /** Recognition passes, taken window by window, so a slow upload never idles the model. */
    private readonly recognizer: WindowRecognizer,
    private readonly metrics: WhisperMetrics,
    private readonly options: TranscriptionOptions,
  ) {
    this.uploads = new WorkQueue({
      concurrency: options.maxUploads,
      depth: 0,
      onDepth: (_waiting, running) => metrics.uploads.set(running),
    });
    this.spool = {
      dir: options.spoolDir,
      budget: new ByteBudget(options.spoolMaxBytes, (used) => metrics.spoolBytes.set(used)),
      retryAfterSeconds: () => this.uploads.retryAfterSeconds(),
    };
  }

  async transcribe(
    messages: AsyncIterable<TranscribeChunk__Output>,
    ctx: RequestContext,
  ): Promise<TranscribeResponse> {
    const upload = await openUpload(messages);
    // Refused before a byte of the file is read: an unknown or loading model, a language it lacks.
    const first = this.registry.get(upload.options.model);
    checkLanguage(first.handle, upload.options.language);
    let modelId = first.id;
    let outcome = 'ok';
    try {
      // Refused here too, before reading, when every place is taken.
      const response = await this.uploads.run(() => this.recognize(upload, ctx), ctx.signal);
      modelId = response.model ?? modelId;
      return response;
    } catch (error) {
      outcome = ctx.signal.aborted ? 'cancelled' : isSwitchboardError(error) ? error.code : 'error';
      throw error;
    } finally {
      this.metrics.requests.inc({ model: modelId, outcome });
    }
  }

  private async recognize(upload: Upload, ctx: RequestContext): Promise<TranscribeResponse> {
    const pcm = decodePcm(upload.data, {
      ffmpegPath: this.options.ffmpegPath,
      maxSeconds: this.options.maxAudioSeconds,
      spool: this.spool,
      logger: ctx.logger,
      signal: ctx.signal,
    });
    const waited = { ms: 0 };
    let chosenId: string | undefined;
    const recognition = await recognizeWindows(
      timed(streamWindows(pcm, this.options.windowing, SAMPLE_RATE), waited),
      {
        // The fields read so far count, so `model` and `language` may follow the file (the
        // openai client sends the file first): for audio of one window that is the whole form.
        choose: () => {
          const { model: name, language } = upload.currentOptions();
          const { id, handle: model } = this.registry.get(name);
          checkLanguage(model, language);
          chosenId = id;
          return { model, language };
        },
        recognizer: this.recognizer,
        inFlight: this.options.windowsInFlight,
        signal: ctx.signal,
      },
    );
    this.metrics.decodeSeconds.observe(waited.ms / 1000);
    // Fields that came after the first window with sound was transcribed must agree with it.
    const final = upload.finalOptions();
    const { id, handle: model } = this.registry.get(final.model);
    checkLanguage(model, final.language);
    const late = (param: string) =>
      new SwitchboardError('invalid_request', {
        message: `${param}: arrived after the first ${this.options.windowing.chunkSeconds} s of audio were transcribed; send it before the file`,
        param,
      });
    if (chosenId !== undefined && chosenId !== id) throw late('model');
    const used = recognition.language;
    if (used !== undefined && final.language && final.language !== used) throw late('language');

    const duration_s = durationSeconds(recognition.samples);
    const language = used ?? final.language;
    if (used === undefined) {
      ctx.logger.info({ duration_s }, 'silent audio; nothing to transcribe');
    } else {
      const seconds = recognition.recognitionSeconds;
      this.metrics.audioSeconds.inc({ model: id }, duration_s);
      this.metrics.realTimeFactor.observe({ model: id }, duration_s / Math.max(seconds, 1e-6));
      ctx.logger.info(
        {
          duration_s,
          seconds,
          language,
          detected: !final.language && model.multilingual,
          chunks: recognition.chunks.length,
        },
        'transcribed',
      );
    }
    return {
      text: recognition.text.trim(),
      language,
      duration_s,
      segments: toSegments(recognition.chunks, duration_s),
      model: id,
    };
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

/** The windows, adding the time spent waiting for each (upload and decoding) to `waited.ms`. */
async function* timed(
  windows: AsyncIterable<WindowSamples>,
  waited: { ms: number },
): AsyncGenerator<WindowSamples, void, undefined> {
  const iterator = windows[Symbol.asyncIterator]();
  try {
    for (;;) {
      const started = performance.now();
      const next = await iterator.next();
      waited.ms += performance.now() - started;
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await iterator.return?.();
  }
}
