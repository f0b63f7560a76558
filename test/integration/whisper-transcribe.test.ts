// POST /transcribe through the real gateway to a real whisper worker process: real ffmpeg decoding
// uploads made at test time by espeak-ng + ffmpeg, the tiny random-weight Whisper on ONNX Runtime
// (`POST /transcribe`). Random weights say nothing meaningful, so these tests check structure, timing,
// language handling and robustness — each would fail if the worker or gateway got them wrong.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { containers, makeAudioFixtures, type AudioFixtures, type Container } from '../support/audio.js';
import { errorOf, type ModelStack, startModelStack } from '../support/stack.js';

let whisper: ModelStack;
let key: CreatedKey;
let audio: AudioFixtures;

before(async () => {
  audio = await makeAudioFixtures();
  whisper = await startModelStack('whisper', { workerEnv: { WHISPER_QUEUE_DEPTH: '16' } });
  key = await createKey(whisper.stack.gateway, { rate_limit_per_minute: 10_000 });
});
after(async () => {
  await whisper?.stop();
  await audio?.remove();
});

interface JsonTranscript {
  text: string;
  language: string;
  duration_s: number;
  segments: { start: number; end: number; text: string }[];
}

function transcribe(file: Buffer | undefined, fields: Record<string, string> = {}, name = 'audio.bin') {
  const form = new FormData();
  for (const [field, value] of Object.entries(fields)) form.append(field, value);
  if (file) form.append('file', new Blob([file]), name);
  return fetch(`${whisper.stack.gateway.url}/transcribe`, {
    method: 'POST',
    headers: bearer(key.key),
    body: form,
  });
}

async function json(file: Buffer, fields: Record<string, string> = {}): Promise<JsonTranscript> {
  const res = await transcribe(file, { ...fields, format: 'json' });
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
  const body = (await res.json()) as JsonTranscript;
  assert.equal(res.headers.get('content-language'), body.language);
  return body;
}

function assertSegmentsWithin(segments: JsonTranscript['segments'], duration: number): void {
  let previousEnd = 0;
  for (const s of segments) {
    assert.ok(s.start >= previousEnd - 1e-9, `segments in order, not overlapping: ${JSON.stringify(s)}`);
    assert.ok(s.end >= s.start, `end after start: ${JSON.stringify(s)}`);
    assert.ok(s.end <= duration + 0.5, `ends within the audio (${duration} s): ${JSON.stringify(s)}`);
    assert.ok(s.text.trim().length > 0);
    previousEnd = s.end;
  }
}

test('every container ffmpeg reads transcribes with 200, the duration measured from the audio', async () => {
  for (const container of Object.keys(containers) as Container[]) {
    const body = await json(await audio.speech(container), { language: 'en' });
    assert.equal(body.language, 'en', container);
    // Lossy encoders pad a little; the decoded length stays within a fraction of a second.
    assert.ok(Math.abs(body.duration_s - audio.speechSeconds) < 0.2, `${container}: ${body.duration_s}`);
    assertSegmentsWithin(body.segments, body.duration_s);
  }
});

test('text is the default format: text/plain with Content-Language', async () => {
  const res = await transcribe(await audio.speech('mp3'), { language: 'fr' });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.equal(res.headers.get('content-language'), 'fr');
  const text = await res.text();
  assert.ok(!text.includes('<|'), 'no special tokens in the text');
});

test('45-second file: windowed, segments ordered and within the duration; srt and vtt well formed', async () => {
  const body = await json(audio.long, { language: 'en' });
  assert.ok(Math.abs(body.duration_s - audio.longSeconds) < 0.05, String(body.duration_s));
  assert.ok(body.segments.length > 0, 'the random model still produces timed text');
  assertSegmentsWithin(body.segments, audio.longSeconds);
  assert.ok(body.segments.at(-1)!.end > 30, 'segments from the second window');

  const srt = await transcribe(audio.long, { language: 'en', format: 'srt' });
  assert.equal(srt.status, 200);
  assert.equal(srt.headers.get('content-type'), 'application/x-subrip; charset=utf-8');
  const cues = (await srt.text()).trimEnd().split('\n\n');
  assert.equal(cues.length, body.segments.length);
  cues.forEach((cue, i) => {
    const [number, timing, ...text] = cue.split('\n');
    assert.equal(number, String(i + 1));
    assert.match(timing!, /^\d{2}:\d{2}:\d{2},\d{3} --> \d{2}:\d{2}:\d{2},\d{3}$/);
    assert.ok(text.join('\n').trim().length > 0);
  });

  const vtt = await transcribe(audio.long, { language: 'en', format: 'vtt' });
  assert.equal(vtt.status, 200);
  assert.equal(vtt.headers.get('content-type'), 'text/vtt; charset=utf-8');
  const [header, ...vttCues] = (await vtt.text()).trimEnd().split('\n\n');
  assert.equal(header, 'WEBVTT');
  assert.equal(vttCues.length, body.segments.length);
  for (const cue of vttCues) {
    const [timing, ...text] = cue.split('\n');
    assert.match(timing!, /^\d{2}:\d{2}:\d{2}\.\d{3} --> \d{2}:\d{2}:\d{2}\.\d{3}$/);
    assert.ok(!text.join('\n').includes('-->'));
  }
});

test('language: forced is used as given; omitted is detected, the same for the same audio', async () => {
  const forced = await json(await audio.speech('wav'), { language: 'de' });
  assert.equal(forced.language, 'de');

  const detected = await json(await audio.speech('wav'));
  assert.match(detected.language, /^[a-z]{2,3}$/);
  // FLAC is lossless: the same samples, so the same detection.
  assert.equal((await json(await audio.speech('flac'))).language, detected.language);
  // Language fields sent after the file count too.
  const form = new FormData();
  form.append('file', new Blob([await audio.speech('wav')]), 'a.wav');
  form.append('language', 'es');
  form.append('format', 'json');
  const res = await fetch(`${whisper.stack.gateway.url}/transcribe`, {
    method: 'POST',
    headers: bearer(key.key),
    body: form,
  });
  assert.equal(((await res.json()) as JsonTranscript).language, 'es');
});

test('silent and empty audio give an empty transcript, not an error', async () => {
  const silent = await json(audio.silence, { language: 'en' });
  assert.deepEqual([silent.text, silent.segments], ['', []]);
  assert.equal(silent.duration_s, 3);
  const text = await transcribe(audio.silence);
  assert.equal(text.status, 200);
  assert.equal(await text.text(), '');
});

test('bad input: not audio, no file, unknown format or language → 400 with the field named', async () => {
  const notAudio = await transcribe(
    Buffer.from('%PDF-1.7 this is not audio at all '.repeat(200)),
    {},
    'x.mp3',
  );
  assert.equal(notAudio.status, 400);
  const error = await errorOf(notAudio);
  assert.equal(error.code, 'invalid_audio');
  assert.ok(!/ffmpeg|pipe:|Invalid data/i.test(error.message), 'the decoder’s words stay in the log');

  const cases: [Buffer | undefined, Record<string, string>, string, string][] = [
    [undefined, {}, 'invalid_request', 'file'],
    [await audio.speech('wav'), { format: 'docx' }, 'invalid_request', 'format'],
    [await audio.speech('wav'), { language: 'english' }, 'invalid_request', 'language'],
    // Two letters, but no language this model (or ISO 639-1) has.
    [await audio.speech('wav'), { language: 'qq' }, 'invalid_request', 'language'],
  ];
  for (const [file, fields, code, param] of cases) {
    const res = await transcribe(file, fields, 'a.wav');
    assert.equal(res.status, 400, JSON.stringify(fields));
    const body = await errorOf(res);
    assert.deepEqual([body.code, body.param], [code, param], JSON.stringify(fields));
  }
});

test('worker metrics: audio seconds, real-time factor, outcomes', async () => {
  assert.ok((await whisper.worker.metric('whisper_audio_seconds_total')) > audio.longSeconds);
  assert.ok((await whisper.worker.metric('whisper_real_time_factor_count')) > 0);
  assert.ok((await whisper.worker.metric('whisper_transcriptions_total', { outcome: 'invalid_audio' })) >= 1);
  assert.equal(await whisper.worker.metric('whisper_queue_depth'), 0);
});
