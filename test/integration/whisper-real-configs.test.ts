// The whisper worker on published Whisper exports (from the published model files beside the
// checkout, each suite skipped, naming its folder, without them: the real tokenizers and configs of
// whisper-base and whisper-tiny.en, without weights) through the real gateway. The
// weights are random (@switchboard/models-dev builds them for each folder's configs: full
// vocabulary, published special tokens, small dimensions), so the text is noise; what is checked
// is that the whole path runs on the files as published — the published mel filters, language
// detection over the real lang_to_id, task and timestamp tokens, suppress lists — and that the
// worker answers for the languages each model has and no others.
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildWhisperFromConfig, setMelBins } from '@switchboard/models-dev';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { makeAudioFixtures, type AudioFixtures } from '../support/audio.js';
import { needsPublishedModels, publishedModelPath } from '../support/shared-models.js';
import { errorOf, startStack, type Stack } from '../support/stack.js';
import {
  sharedModelRepository,
  startWorker,
  type TinyModelRepository,
  type WorkerProcess,
} from '../support/worker.js';

let audio: AudioFixtures;
before(async () => {
  audio = await makeAudioFixtures(40);
});
after(async () => {
  await audio?.remove();
});

interface JsonTranscript {
  text: string;
  language: string;
  duration_s: number;
  segments: { start: number; end: number; text: string }[];
}

interface ModelsEntry {
  id: string;
  capability: string;
  status: string;
  development: boolean;
  dtype?: string;
  multilingual?: boolean;
  languages?: string[];
}

/** The language codes of a published generation_config.json's lang_to_id. */
async function publishedLanguages(folder: string): Promise<string[]> {
  const generation = JSON.parse(
    await readFile(publishedModelPath('whisper', folder, 'generation_config.json'), 'utf8'),
  ) as { lang_to_id?: Record<string, number> };
  return Object.keys(generation.lang_to_id ?? {}).map((token) => token.slice(2, -2));
}

/** A worker on one model folder behind a stack of its own; its requests and checks. */
function cluster(repository: () => Promise<TinyModelRepository>) {
  const c = {} as {
    repo: TinyModelRepository;
    worker: WorkerProcess;
    stack: Stack;
    key: CreatedKey;
  };
  before(async () => {
    c.repo = await repository();
    c.worker = await startWorker('whisper', {
      env: { MODEL_DIR: c.repo.modelDir, ORT_INTRA_OP_THREADS: '1' },
    });
    c.stack = await startStack({ env: { WHISPER_ADDR: c.worker.address } });
    c.key = await createKey(c.stack.gateway, { rate_limit_per_minute: 10_000 });
  });
  after(async () => {
    await c.stack?.stop();
    await c.worker?.stop();
    await c.repo?.remove();
  });
  const transcribe = (file: Buffer, fields: Record<string, string> = {}) => {
    const form = new FormData();
    for (const [field, value] of Object.entries(fields)) form.append(field, value);
    form.append('file', new Blob([file]), 'audio.bin');
    return fetch(`${c.stack.gateway.url}/transcribe`, {
      method: 'POST',
      headers: bearer(c.key.key),
      body: form,
    });
  };
  return {
    transcribe,
    async json(file: Buffer, fields: Record<string, string> = {}): Promise<JsonTranscript> {
      const res = await transcribe(file, { ...fields, format: 'json' });
      assert.equal(res.status, 200, await res.clone().text());
      const body = (await res.json()) as JsonTranscript;
      assert.equal(res.headers.get('content-language'), body.language);
      return body;
    },
    async model(): Promise<ModelsEntry> {
      const res = await fetch(`${c.stack.gateway.url}/models`, { headers: bearer(c.key.key) });
      assert.equal(res.status, 200);
      const { data } = (await res.json()) as { data: ModelsEntry[] };
      const whisper = data.filter((m) => m.capability === 'whisper');
      assert.equal(whisper.length, 1, JSON.stringify(data));
      return whisper[0]!;
    },
    async refusesLanguage(language: string): Promise<void> {
      const res = await transcribe(await audio.speech('wav'), { language });
      assert.equal(res.status, 400, language);
      const error = await errorOf(res);
      assert.equal(error.code, 'invalid_request');
      assert.equal(error.param, 'language');
    },
  };
}

/** SRT and VTT of the 40-s file (two windows): cues numbered, timed and in order. */
async function assertSubtitlesWellFormed(
  transcribe: ReturnType<typeof cluster>['transcribe'],
  fields: Record<string, string>,
): Promise<void> {
  const srt = await transcribe(audio.long, { ...fields, format: 'srt' });
  assert.equal(srt.status, 200, await srt.clone().text());
  assert.equal(srt.headers.get('content-type'), 'application/x-subrip; charset=utf-8');
  const cues = (await srt.text()).trimEnd().split('\n\n');
  assert.ok(cues.length > 0);
  let previous = '';
  cues.forEach((cue, i) => {
    const [number, timing, ...text] = cue.split('\n');
    assert.equal(number, String(i + 1));
    const match = /^(\d{2}:\d{2}:\d{2},\d{3}) --> (\d{2}:\d{2}:\d{2},\d{3})$/.exec(timing ?? '');
    assert.ok(match, `SRT timing: ${timing}`);
    assert.ok(match[1]! >= previous && match[2]! >= match[1]!, cue);
    previous = match[2]!;
    assert.ok(text.join('\n').trim().length > 0);
    assert.ok(!text.join('\n').includes('<|'), 'no special or timestamp tokens in the text');
  });
  assert.ok(previous > '00:00:30,000', 'cues from the second window');

  const vtt = await transcribe(audio.long, { ...fields, format: 'vtt' });
  assert.equal(vtt.status, 200);
  assert.equal(vtt.headers.get('content-type'), 'text/vtt; charset=utf-8');
  const [header, ...vttCues] = (await vtt.text()).trimEnd().split('\n\n');
  assert.equal(header, 'WEBVTT');
  assert.equal(vttCues.length, cues.length);
  for (const cue of vttCues) {
    const [timing, ...text] = cue.split('\n');
    assert.match(timing!, /^\d{2}:\d{2}:\d{2}\.\d{3} --> \d{2}:\d{2}:\d{2}\.\d{3}$/);
    assert.ok(!text.join('\n').includes('-->'));
  }
}

/** A suite on a published Whisper folder skips, naming it, when the published files are absent. */
const needs = (folder: string) => ({ skip: needsPublishedModels('whisper', folder) });

describe('whisper-base: the multilingual tokenizer and configs as published', needs('whisper-base'), () => {
  const base = cluster(() =>
    sharedModelRepository('whisper/whisper-base', {
      prepare: (dir) => buildWhisperFromConfig(dir, { seed: 1 }),
    }),
  );
  let languages: string[];
  before(async () => {
    languages = await publishedLanguages('whisper-base');
    assert.equal(languages.length, 99);
  });

  test('/models: multilingual, the languages of its lang_to_id, fp32', async () => {
    const model = await base.model();
    assert.equal(model.id, 'whisper-base');
    assert.equal(model.status, 'ready');
    assert.equal(model.development, true, 'random weights are marked as such');
    assert.equal(model.dtype, 'fp32');
    assert.equal(model.multilingual, true);
    assert.deepEqual(model.languages, [...languages].sort());
  });

  test('detection chooses among the model language tokens; the transcript is timed text', async () => {
    for (const file of [await audio.speech('mp3'), await audio.speech('ogg'), audio.long]) {
      const body = await base.json(file);
      assert.ok(languages.includes(body.language), body.language);
      assert.ok(body.segments.length > 0);
      for (const s of body.segments) assert.ok(s.end >= s.start && s.end <= body.duration_s + 0.5);
    }
  });

  test('a language it has is used (fr); one Whisper lacks (xx) is 400 naming language', async () => {
    const res = await base.transcribe(await audio.speech('wav'), { language: 'fr' });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('content-language'), 'fr');
    assert.ok(!(await res.text()).includes('<|'));
    await base.refusesLanguage('xx');
  });

  test('SRT and VTT stay well formed', async () => {
    await assertSubtitlesWellFormed(base.transcribe, { language: 'de' });
  });
});

describe(
  'whisper-tiny.en: the English-only tokenizer and configs as published',
  needs('whisper-tiny.en'),
  () => {
    const tiny = cluster(() =>
      sharedModelRepository('whisper/whisper-tiny.en', {
        prepare: (dir) => buildWhisperFromConfig(dir, { seed: 2 }),
      }),
    );

    test('/models: not multilingual, English only', async () => {
      assert.deepEqual(await publishedLanguages('whisper-tiny.en'), [], 'the export has no lang_to_id');
      const model = await tiny.model();
      assert.equal(model.id, 'whisper-tiny.en');
      assert.equal(model.dtype, 'fp32');
      assert.equal(model.multilingual, false);
      assert.deepEqual(model.languages, ['en']);
    });

    test('without a language it transcribes English (no detection); en is accepted, fr is 400', async () => {
      const detected = await tiny.json(await audio.speech('mp3'));
      assert.equal(detected.language, 'en');
      assert.ok(detected.segments.length > 0);
      const res = await tiny.transcribe(await audio.speech('wav'), { language: 'en' });
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(res.headers.get('content-language'), 'en');
      await tiny.refusesLanguage('fr');
    });

    test('SRT and VTT stay well formed', async () => {
      await assertSubtitlesWellFormed(tiny.transcribe, {});
    });
  },
);

describe(
  'a large-v3-style front end: 128 mel bins from the configs, a fine-tune with fewer languages',
  needs('whisper-base'),
  () => {
    const kept = ['de', 'fr', 'ja'];
    const variant = cluster(() =>
      sharedModelRepository('whisper/whisper-base', {
        modelId: 'whisper-base-128-mel',
        prepare: async (dir) => {
          // 128-bin filters in preprocessor_config.json and num_mel_bins 128, as large-v3 publishes them.
          await setMelBins(dir, 128);
          // A fine-tune that kept three languages: its lang_to_id, not Whisper's full list, is what it has.
          const path = join(dir, 'generation_config.json');
          const generation = JSON.parse(await readFile(path, 'utf8')) as {
            lang_to_id: Record<string, number>;
          };
          generation.lang_to_id = Object.fromEntries(
            Object.entries(generation.lang_to_id).filter(([token]) => kept.includes(token.slice(2, -2))),
          );
          await rm(path); // the copy keeps the shared file's read-only mode; setMelBins made the folder writable
          await writeFile(path, JSON.stringify(generation));
          return buildWhisperFromConfig(dir, { seed: 3 });
        },
      }),
    );

    test('the 128-bin encoder loads and transcribes; detection picks only among its own languages', async () => {
      const model = await variant.model();
      assert.equal(model.multilingual, true);
      assert.deepEqual(model.languages, kept);
      for (const file of [await audio.speech('wav'), await audio.speech('flac'), audio.long]) {
        const body = await variant.json(file);
        assert.ok(kept.includes(body.language), body.language);
      }
      await variant.refusesLanguage('en');
      const res = await variant.transcribe(await audio.speech('wav'), { language: 'ja' });
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(res.headers.get('content-language'), 'ja');
    });
  },
);
