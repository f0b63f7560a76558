// POST /v1/audio/transcriptions through the official `openai` npm client, pointed at a real
// gateway over a real whisper worker (the tiny random-weight model: its words are noise, so the
// checks are on shapes and times): every response_format, the same transcript in each, and the
// 400s the client reports as BadRequestError with `param`.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { buildTinyWhisper } from '@switchboard/models-dev';
import { createKey, type CreatedKey } from '../support/admin.js';
import { makeAudioFixtures, type AudioFixtures } from '../support/audio.js';
import { type ModelStack, startModelStack } from '../support/stack.js';
import { tinyWhisperRepository } from '../support/worker.js';

let whisper: ModelStack;
let key: CreatedKey;
let audio: AudioFixtures;
let client: OpenAI;
let speech: Buffer;

const MODEL = 'tiny-whisper-dev';
// A second model beside the default, with other weights, so which one ran shows in the words.
const OTHER_MODEL = 'tiny-whisper-other';

before(async () => {
  audio = await makeAudioFixtures();
  whisper = await startModelStack('whisper', {
    repository: async () => {
      const repo = await tinyWhisperRepository(MODEL);
      await buildTinyWhisper(join(repo.modelDir, 'whisper', OTHER_MODEL), { seed: 7 });
      return repo;
    },
    workerEnv: { WHISPER_DEFAULT_MODEL: MODEL },
  });
  key = await createKey(whisper.stack.gateway, { rate_limit_per_minute: 10_000 });
  client = new OpenAI({ apiKey: key.key, baseURL: `${whisper.stack.gateway.url}/v1`, maxRetries: 0 });
  speech = await audio.speech('mp3');
});
after(async () => {
  await whisper?.stop();
  await audio?.remove();
});

const transcribe = async (fields: Record<string, unknown>, file = speech) =>
  client.audio.transcriptions.create({
    model: whisper.repo.modelId,
    file: await toFile(file, 'speech.mp3'),
    ...fields,
  } as OpenAI.Audio.TranscriptionCreateParamsNonStreaming) as Promise<unknown>;

interface Verbose {
  task: string;
  language: string;
  duration: number;
  text: string;
  segments: { id: number; start: number; end: number; text: string }[];
}

test('every response_format: json, text, srt, vtt and verbose_json, the same transcript in each', async () => {
  const verbose = (await transcribe({
    response_format: 'verbose_json',
    timestamp_granularities: ['segment'],
    language: 'en',
    prompt: 'ignored',
    temperature: 0,
  })) as Verbose;
  assert.equal(verbose.task, 'transcribe');
  assert.equal(verbose.language, 'en');
  assert.ok(Math.abs(verbose.duration - audio.speechSeconds) < 0.5, `duration ${verbose.duration}`);
  assert.ok(verbose.segments.length > 0, 'at least one segment');
  let previousEnd = 0;
  verbose.segments.forEach((segment, i) => {
    assert.deepEqual(Object.keys(segment).sort(), ['end', 'id', 'start', 'text']);
    assert.equal(segment.id, i);
    assert.ok(segment.start >= previousEnd - 1e-9 && segment.end >= segment.start, JSON.stringify(segment));
    assert.ok(
      segment.end <= verbose.duration + 1e-9,
      `segment within the duration: ${JSON.stringify(segment)}`,
    );
    previousEnd = segment.end;
  });

  const json = (await transcribe({ response_format: 'json', language: 'en' })) as { text: string };
  assert.deepEqual(json, { text: verbose.text });
  // The client returns the body as a string for the text formats.
  const text = (await transcribe({ response_format: 'text', language: 'en' })) as string;
  assert.equal(text.trim(), verbose.text);
  const srt = (await transcribe({ response_format: 'srt', language: 'en' })) as string;
  assert.match(srt, /^1\n\d{2}:\d{2}:\d{2},\d{3} --> \d{2}:\d{2}:\d{2},\d{3}\n/);
  assert.equal(srt.match(/ --> /g)?.length, verbose.segments.length, 'one cue per segment');
  const vtt = (await transcribe({ response_format: 'vtt', language: 'en' })) as string;
  assert.match(vtt, /^WEBVTT\n\n\d{2}:\d{2}:\d{2}\.\d{3} --> /);
  assert.equal(vtt.match(/ --> /g)?.length, verbose.segments.length);
});

test('bad fields are BadRequestError naming the param; no file too', async () => {
  for (const [fields, param] of [
    [{ response_format: 'docx' }, 'response_format'],
    [{ timestamp_granularities: ['word'] }, 'timestamp_granularities'],
    [{ language: 'english' }, 'language'],
    [{ temperature: 3 }, 'temperature'],
  ] as const) {
    await assert.rejects(transcribe(fields), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError, `${JSON.stringify(fields)}: ${String(error)}`);
      assert.equal(error.param, param);
      return true;
    });
  }
  await assert.rejects(transcribe({ model: 'no-such-model' }), (error: unknown) => {
    assert.ok(error instanceof OpenAI.BadRequestError, String(error));
    assert.equal(error.code, 'unknown_model');
    return true;
  });
  const form = new FormData();
  form.append('model', whisper.repo.modelId);
  const res = await fetch(`${client.baseURL}/audio/transcriptions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.key}` },
    body: form,
  });
  assert.equal(res.status, 400);
  assert.deepEqual(((await res.json()) as { error: unknown }).error, {
    message: 'file: an audio file is required',
    type: 'invalid_request_error',
    param: 'file',
    code: 'invalid_request',
    request_id: res.headers.get('x-request-id'),
  });
});

test('`model` may come after `file`, as the client sends it, whatever the length of the audio', async () => {
  const textWith = async (model: string, modelFirst: boolean, file = speech) => {
    const form = new FormData();
    if (modelFirst) form.append('model', model);
    form.append('file', new Blob([file]), 'speech.mp3');
    if (!modelFirst) form.append('model', model);
    form.append('response_format', 'text');
    form.append('language', 'en');
    const res = await fetch(`${client.baseURL}/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}` },
      body: form,
    });
    return { status: res.status, body: await res.text() };
  };
  const other = await textWith(OTHER_MODEL, true);
  assert.equal(other.status, 200, other.body);
  assert.notEqual(other.body, (await textWith(whisper.repo.modelId, true)).body, 'the two models differ');
  assert.deepEqual(await textWith(OTHER_MODEL, false), other, 'named after the file, it is the one used');
  // Through the client too, whose form puts the file first.
  const viaClient = await client.audio.transcriptions.create({
    file: await toFile(speech, 'speech.mp3'),
    model: OTHER_MODEL,
    language: 'en',
    response_format: 'text',
  });
  assert.equal(viaClient, other.body);

  // A file longer than one window: recognition waits for the form's end, so a model named after
  // the file is used for every window, as one named before it; an unknown one is refused as such.
  const long = await textWith(OTHER_MODEL, true, audio.long);
  assert.equal(long.status, 200, long.body);
  assert.deepEqual(await textWith(OTHER_MODEL, false, audio.long), long);
  await assert.rejects(
    client.audio.transcriptions.create({ file: await toFile(speech, 'speech.mp3'), model: 'no-such-model' }),
    (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.equal(error.code, 'unknown_model');
      assert.equal(error.param, 'model');
      return true;
    },
  );
});
