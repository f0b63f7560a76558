// Recognition of audio as it is decoded: each window goes to the model as soon as it is complete
// and is then dropped, so memory holds one window per transcription (plus the tokens so far),
// whatever the audio's length. While a window waits for the model, nothing more is read, which
// pauses the decoder and, through it, the upload.
import { isSilent } from '../audio/pcm.js';
import type { SpeechModel, WindowText } from './speech-model.js';
import type { WindowSamples } from './windows.js';

/** The model to run and the language to transcribe in ('' = detect it from the first window). */
export interface RecognitionChoice {
  readonly model: SpeechModel;
  readonly language: string;
}

export interface RecognizeWindowsOptions {
  /**
   * Asked once, when the first window with sound is ready: asked that late so that fields sent
   * after a short file (one window, the common case) still count.
   */
  choose(): RecognitionChoice;
  /** Runs model work when a recognition slot is free (the worker's queue), one window at a time. */
  inSlot<T>(work: () => Promise<T>): Promise<T>;
  readonly signal: AbortSignal;
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
  /** Seconds the model spent on this audio (time in recognition slots). */
  readonly recognitionSeconds: number;
}

export async function recognizeWindows(
  windows: AsyncIterable<WindowSamples>,
  options: RecognizeWindowsOptions,
): Promise<WindowedRecognition> {
  const { signal } = options;
  const texts: WindowText[] = [];
  let model: SpeechModel | undefined;
  let language: string | undefined;
  let samples = 0;
  let busyMs = 0;
  for await (const { samples: audio, ...window } of windows) {
    samples = window.end;
    // Whisper invents text ("Thank you.") for silence, so a silent window never reaches it; it
    // still takes its place in the stitching, so later times stay right.
    if (isSilent(audio)) {
      texts.push({ window, tokens: [] });
      continue;
    }
    const tokens = await options.inSlot(async () => {
      const started = performance.now();
      try {
        if (model === undefined || language === undefined) {
          const choice = options.choose();
          model = choice.model;
          language = choice.language || (await model.detectLanguage(audio));
        }
        return await model.recognizeWindow({ samples: audio, language, signal });
      } finally {
        busyMs += performance.now() - started;
      }
    });
    texts.push({ window, tokens });
  }
  signal.throwIfAborted();
  const { text, chunks } = model === undefined ? { text: '', chunks: [] } : model.stitch(texts);
  return { text, chunks, language, model, samples, recognitionSeconds: busyMs / 1000 };
}
