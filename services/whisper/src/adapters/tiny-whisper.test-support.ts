// Test support: the tiny random-weight Whisper of libs/models-dev, built into a temporary model
// folder and loaded through this worker's own adapter, as the worker loads a model.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useLocalModels } from '@switchboard/models';
import { buildTinyWhisper } from '@switchboard/models-dev';
import type { SpeechModel } from '../recognition/speech-model.js';
import { loadWhisperModel } from './whisper-model.js';

export interface TinyWhisper {
  readonly model: SpeechModel;
  /** Disposes the model and removes its folder. */
  remove(): Promise<void>;
}

export async function loadTinyWhisper(seed = 0): Promise<TinyWhisper> {
  const dir = await mkdtemp(join(tmpdir(), 'tiny-whisper-'));
  try {
    await buildTinyWhisper(join(dir, 'whisper', 'tiny'), { seed });
    useLocalModels(join(dir, 'whisper'));
    const model = await loadWhisperModel(
      { id: 'tiny', dir: '', description: '' },
      { providers: ['cpu'], deviceId: 0 },
    );
    return {
      model,
      async remove() {
        await model.dispose();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
