// Transcription as the RPC sees it: refuse what can be refused before the upload is read (model
// loading or unknown, bad language), then receive the whole upload into the spool, and only then —
// the form's fields are all known, whatever their order — decode it and recognise it window by
// window as ffmpeg produces them, and answer segments the gateway can render in any format.
//
// An upload still arriving costs spool bytes only (within the spool's budget and its key's), never
// a recognition place: a client that sends slowly, or many of them, cannot hold the model up. The
// upload's own bytes are kept rather than decoded samples, since 16 kHz mono float is 64 KB per
// second of audio — more than nearly every compressed upload — while the bytes are bounded by the
// tier's upload limit and the spool's budgets. Once received, a transcription takes one of
// `maxTranscriptions` places (waiting ones served by key in turns) and holds a few windows of
// samples at a time (those in flight), so memory does not grow with length.
import type { ListModelsResponse, TranscribeChunk__Output, TranscribeResponse } from '@switchboard/contracts';
import { isSwitchboardError, SwitchboardError } from '@switchboard/errors';
import type { RequestContext } from '@switchboard/grpc';
import { WorkQueue, type ModelRegistry } from '@switchboard/models';
import {
  captureTraceParent,
  failSpan,
  startSpanIn,
  withSpan,
  type Span,
  type TraceParent,
} from '@switchboard/telemetry';
import { decodeReceived, receiveUpload, type ReceivedUpload } from '../adapters/ffmpeg-decoder.js';
import { ByteBudget, KeyedByteBudget } from '../audio/byte-budget.js';
import { durationSeconds, SAMPLE_RATE } from '../audio/pcm.js';
import type { Spool } from '../audio/upload-source.js';
import type { WindowRecognizer } from '../recognition/recognition-queue.js';
import { recognizeWindows } from '../recognition/recognize-windows.js';
import { toSegments } from '../recognition/segments.js';
import type { SpeechModel } from '../recognition/speech-model.js';
import { streamWindows, type WindowSamples, type Windowing } from '../recognition/windows.js';
import type { WhisperMetrics } from '../metrics.js';
import { openUpload } from './upload.js';

export interface TranscriptionOptions {
  readonly ffmpegPath: string;
  readonly maxAudioSeconds: number;
  readonly spoolDir: string;
  readonly spoolMaxBytes: number;
  /** Bytes one key's uploads may hold in the spool together. */
  readonly spoolPerKeyBytes: number;
  readonly windowing: Windowing;
  /** Received uploads decoded and recognised at once (recognition concurrency + queue depth). */
  readonly maxTranscriptions: number;
  /** Windows of one upload recognised or waiting at once (the batch size: one file fills a pass). */
  readonly windowsInFlight: number;
}

/** The model and language every window of one transcription uses. */
interface Choice {
  readonly id: string;
  readonly model: SpeechModel;
  /** '' = detect it from the first window with sound. */
  readonly language: string;
}

export class TranscriptionService {
  /** One place per received upload being decoded and recognised, from its last byte to its answer. */
  private readonly transcriptions: WorkQueue;
  private readonly spool: Spool;
  private open = 0;

  constructor(
    private readonly registry: ModelRegistry<SpeechModel>,
    /** Recognition passes, taken window by window, so one long file never idles the model. */
    private readonly recognizer: WindowRecognizer,
    private readonly metrics: WhisperMetrics,
    private readonly options: TranscriptionOptions,
  ) {
    // Received uploads wait their turn (by key) rather than being refused after the client sent
    // them whole; as many may wait as run, beyond which the key with the most waiting is refused.
    this.transcriptions = new WorkQueue({
      concurrency: options.maxTranscriptions,
      depth: options.maxTranscriptions,
    });
    this.spool = {
      dir: options.spoolDir,
      budget: new ByteBudget(options.spoolMaxBytes, (used) => metrics.spoolBytes.set(used)),
      perKey: new KeyedByteBudget(options.spoolPerKeyBytes),
      retryAfterSeconds: () => this.transcriptions.retryAfterSeconds(),
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
    const owner = ctx.keyId ?? '';
    this.metrics.uploads.set(++this.open);
    try {
      const started = performance.now();
      const received = await withSpan('whisper', 'whisper.upload', {}, async (span) => {
        const spooled = await receiveUpload(upload.data, {
          spool: this.spool,
          owner,
          logger: ctx.logger,
          signal: ctx.signal,
        });
        span.setAttribute('whisper.demuxer', spooled.demuxer);
        return spooled;
      });
      try {
        const receivedMs = performance.now() - started;
        // The stream has ended, so the fields are final: those sent after the file count as much
        // as those sent before it, and they are checked again (a later one may name another model).
        const final = upload.finalOptions();
        const { id, handle: model } = this.registry.get(final.model);
        checkLanguage(model, final.language);
        modelId = id;
        const choice = { id, model, language: final.language };
        // Its spans belong to this call's trace, whichever turn of the queue starts the work.
        const trace = captureTraceParent();
        return await this.transcriptions.run(
          () => this.recognize(received, choice, receivedMs, ctx, trace),
          ctx.signal,
          owner,
        );
      } finally {
        await received.remove();
      }
    } catch (error) {
      outcome = ctx.signal.aborted ? 'cancelled' : isSwitchboardError(error) ? error.code : 'error';
      throw error;
    } finally {
      this.metrics.uploads.set(--this.open);
      this.metrics.requests.inc({ model: modelId, outcome });
    }
  }

  private async recognize(
    received: ReceivedUpload,
    { id, model, language: forced }: Choice,
    receivedMs: number,
    ctx: RequestContext,
    trace: TraceParent,
  ): Promise<TranscribeResponse> {
    const decoding = startSpanIn(trace, 'whisper', 'whisper.decode', { 'whisper.demuxer': received.demuxer });
    const pcm = decodeReceived(received, {
      ffmpegPath: this.options.ffmpegPath,
      maxSeconds: this.options.maxAudioSeconds,
      logger: ctx.logger,
      signal: ctx.signal,
    });
    const waited = { ms: receivedMs };
    const recognition = await recognizeWindows(
      timed(streamWindows(pcm, this.options.windowing, SAMPLE_RATE), waited, decoding),
      {
        choose: () => ({ model, language: forced }),
        recognizer: this.recognizer,
        inFlight: this.options.windowsInFlight,
        owner: ctx.keyId ?? '',
        signal: ctx.signal,
        trace,
      },
    );
    this.metrics.decodeSeconds.observe(waited.ms / 1000);

    const duration_s = durationSeconds(recognition.samples);
    const language = recognition.language ?? forced;
    if (recognition.language === undefined) {
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
          detected: !forced && model.multilingual,
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

/**
 * The windows, adding the time spent waiting for each (upload and decoding) to `waited.ms`. `span`
 * (whisper.decode) lasts from ffmpeg's start to its last sample, while recognition goes on beside
 * it, and records how long recognition actually waited for decoded audio.
 */
async function* timed(
  windows: AsyncIterable<WindowSamples>,
  waited: { ms: number },
  span: Span,
): AsyncGenerator<WindowSamples, void, undefined> {
  const iterator = windows[Symbol.asyncIterator]();
  let waitedMs = 0;
  let audioEnd = 0;
  let open = true;
  try {
    for (;;) {
      const started = performance.now();
      let next: IteratorResult<WindowSamples>;
      try {
        next = await iterator.next();
      } catch (error) {
        open = false;
        failSpan(span, error);
        throw error;
      }
      const elapsed = performance.now() - started;
      waited.ms += elapsed;
      waitedMs += elapsed;
      if (next.done) return;
      audioEnd = next.value.end;
      yield next.value;
    }
  } finally {
    if (open) {
      span.setAttributes({
        'whisper.audio_seconds': audioEnd / SAMPLE_RATE,
        'whisper.wait_seconds': waitedMs / 1000,
      });
      span.end();
    }
    await iterator.return?.();
  }
}
