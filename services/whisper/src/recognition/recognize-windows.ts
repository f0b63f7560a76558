// Recognition of audio as it is decoded: each window goes to the model as soon as it is complete,
// and up to `inFlight` windows of one transcription wait for or run in the model at once, so that
// the windows of one long file can share a batch; a window is dropped once recognised, so memory
// holds a few windows per transcription (plus the tokens so far), whatever the audio's length.
// While `inFlight` windows are out, nothing more is read, which pauses the decoder and, through it,
// the upload.
import { captureTraceParent, withSpanIn, type TraceParent } from '@switchboard/telemetry';
import { isSilent, SAMPLE_RATE } from '../audio/pcm.js';
import { directRecognizer, type Timed, type WindowRecognizer } from './recognition-queue.js';
import type { SpeechModel, WindowText } from './speech-model.js';
import type { WindowSamples } from './windows.js';

/** The model to run and the language to transcribe in ('' = detect it from the first window). */
export interface RecognitionChoice {
  readonly model: SpeechModel;
  readonly language: string;
}

export interface RecognizeWindowsOptions {
  /**
   * Asked once, when the first window with sound is ready (never for audio that is all silence),
   * and used for every window.
   */
  choose(): RecognitionChoice;
  /** Where the model work runs (the worker's RecognitionQueue); default: straight on the model. */
  readonly recognizer?: WindowRecognizer;
  /** Windows of this audio recognised or waiting at once (default 1: one at a time). */
  readonly inFlight?: number;
  /** Whose work this is (the caller's key id), for the recognizer's turns. */
  readonly owner?: string;
  readonly signal: AbortSignal;
  /** The trace its spans join (whisper.detect_language, whisper.recognize); default: the active one. */
  readonly trace?: TraceParent;
}

export interface WindowedRecognition {
  readonly text: string;
  readonly chunks: ReturnType<SpeechModel['stitch']>['chunks'];
  /** The language used, or undefined when every window was silent and the model never ran. */
  readonly language: string | undefined;
  /** The model that ran, or undefined when it never did. */
  readonly model: SpeechModel | undefined;
  /** Samples decoded in all. */
  readonly samples: number;
  /** Seconds during which the model worked on this audio (its passes, overlaps counted once). */
  readonly recognitionSeconds: number;
}

export async function recognizeWindows(
  windows: AsyncIterable<WindowSamples>,
  options: RecognizeWindowsOptions,
): Promise<WindowedRecognition> {
  const recognizer = options.recognizer ?? directRecognizer;
  const trace = options.trace ?? captureTraceParent();
  const inFlight = options.inFlight ?? 1;
  if (!Number.isInteger(inFlight) || inFlight < 1) throw new Error('inFlight must be a positive integer');
  // A failed window ends its siblings still in flight, as the caller's abort does.
  const failed = new AbortController();
  const signal = AbortSignal.any([options.signal, failed.signal]);
  const texts: WindowText[] = [];
  const passes: Timed<unknown>[] = [];
  const pending = new Set<Promise<void>>();
  let model: SpeechModel | undefined;
  let language: string | undefined;
  let samples = 0;
  try {
    for await (const { samples: audio, ...window } of windows) {
      signal.throwIfAborted();
      samples = window.end;
      const at = texts.length;
      // Whisper invents text ("Thank you.") for silence, so a silent window never reaches it; it
      // still takes its place in the stitching, so later times stay right.
      texts.push({ window, tokens: [] });
      if (isSilent(audio)) continue;
      if (model === undefined || language === undefined) {
        // Settled before any window is recognised: every window then uses the same prompt.
        const choice = options.choose();
        model = choice.model;
        if (choice.language) {
          language = choice.language;
        } else {
          const chosen = model;
          const detected = await withSpanIn(
            trace,
            'whisper',
            'whisper.detect_language',
            { 'whisper.model': chosen.id },
            async (span) => {
              const found = await recognizer.detectLanguage(chosen, audio, signal, options.owner);
              span.setAttribute('whisper.language', found.value);
              return found;
            },
          );
          passes.push(detected);
          language = detected.value;
        }
      }
      // The windower reuses its buffer for the next window, which is read while this one waits.
      const request = { samples: audio.slice(), language, signal };
      // A span per window (a file has few): its wait for a pass and the pass, in the caller's trace.
      const windowModel = model;
      const attributes = {
        'whisper.model': windowModel.id,
        'whisper.window': at,
        'whisper.window_start_seconds': window.start / SAMPLE_RATE,
        'whisper.window_end_seconds': window.end / SAMPLE_RATE,
      };
      const recognized = withSpanIn(trace, 'whisper', 'whisper.recognize', attributes, async (span) => {
        const submitted = performance.now();
        const result = await recognizer.recognize(windowModel, request, options.owner);
        span.setAttributes({
          'whisper.batch_size': result.batchSize,
          'whisper.wait_seconds': Math.max(0, result.started - submitted) / 1000,
          'whisper.tokens': result.value.length,
        });
        return result;
      }).then((result) => {
        passes.push(result);
        texts[at] = { window, tokens: result.value };
      });
      pending.add(recognized);
      // Settled ones leave the set; a failure ends the others at once and is rethrown below.
      recognized.then(
        () => pending.delete(recognized),
        (error: unknown) => failed.abort(error),
      );
      // Backpressure: no more is read while `inFlight` windows are out.
      while (pending.size >= inFlight) await Promise.race(pending);
    }
    await Promise.all(pending);
  } catch (error) {
    failed.abort(error);
    throw error;
  } finally {
    // Nothing of this audio is left running in the model once this returns or throws.
    await Promise.allSettled(pending);
  }
  options.signal.throwIfAborted();
  const { text, chunks } = model === undefined ? { text: '', chunks: [] } : model.stitch(texts);
  return { text, chunks, language, model, samples, recognitionSeconds: busySeconds(passes) };
}

/** Seconds covered by the passes' intervals, overlapping ones (windows of one batch) counted once. */
function busySeconds(passes: readonly Timed<unknown>[]): number {
  const sorted = [...passes].sort((a, b) => a.started - b.started);
  let total = 0;
  let end = -Infinity;
  for (const { started, ended } of sorted) {
    total += Math.max(0, ended - Math.max(started, end));
    end = Math.max(end, ended);
  }
  return total / 1000;
}
