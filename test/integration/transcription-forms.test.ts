// How the transcription routes read their multipart form, through a real gateway and a real
// whisper worker (the tiny random-weight model: its words are noise, but the same audio and
// settings always give the same words, so equal bodies mean equal settings were used). Fields may
// come before or after the file with the same answer, for audio longer than one 30-s window too;
// a malformed form is a 400 invalid_request in the route's error shape, never a 500.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { makeAudioFixtures, type AudioFixtures } from '../support/audio.js';
import { errorOf, type ModelStack, startModelStack } from '../support/stack.js';

let whisper: ModelStack;
let key: CreatedKey;
let audio: AudioFixtures;

before(async () => {
  audio = await makeAudioFixtures();
  whisper = await startModelStack('whisper');
  key = await createKey(whisper.stack.gateway, { rate_limit_per_minute: 10_000 });
});
after(async () => {
  await whisper?.stop();
  await audio?.remove();
});

/** A form with `before` fields, then the file, then `after` fields, in that order. */
function form(file: Buffer, name: string, before: Record<string, string>, after: Record<string, string>) {
  const body = new FormData();
  for (const [field, value] of Object.entries(before)) body.append(field, value);
  body.append('file', new Blob([file]), name);
  for (const [field, value] of Object.entries(after)) body.append(field, value);
  return body;
}

async function post(path: string, body: FormData): Promise<{ status: number; type: string; text: string }> {
  const res = await fetch(`${whisper.stack.gateway.url}${path}`, {
    method: 'POST',
    headers: bearer(key.key),
    body,
  });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

test('/transcribe, 45 s of audio: language and format after the file give what they give before it', async () => {
  assert.ok(audio.longSeconds > 30, 'more than one window');
  for (const fields of [
    { language: 'en', format: 'json' },
    { language: 'de', format: 'srt' },
  ]) {
    const first = await post('/transcribe', form(audio.long, 'long.wav', fields, {}));
    assert.equal(first.status, 200, first.text);
    // As curl -F sends them when written after the file.
    const last = await post('/transcribe', form(audio.long, 'long.wav', {}, fields));
    assert.deepEqual(last, first, JSON.stringify(fields));
  }
  const json = JSON.parse(
    (await post('/transcribe', form(audio.long, 'long.wav', {}, { format: 'json', language: 'de' }))).text,
  ) as { language: string; duration_s: number; segments: { end: number }[] };
  assert.equal(json.language, 'de');
  assert.ok(Math.abs(json.duration_s - audio.longSeconds) < 0.05);
  assert.ok(json.segments.at(-1)!.end > 30, 'the second window was transcribed too');
});

test('/v1/audio/transcriptions, 45 s of audio: the openai client’s form (file first) answers as fields first', async () => {
  const fields = {
    model: whisper.repo.modelId,
    language: 'en',
    response_format: 'verbose_json',
  } as const;
  const first = await post('/v1/audio/transcriptions', form(audio.long, 'long.wav', fields, {}));
  assert.equal(first.status, 200, first.text);
  const last = await post('/v1/audio/transcriptions', form(audio.long, 'long.wav', {}, fields));
  assert.deepEqual(last, first);
  const client = new OpenAI({
    apiKey: key.key,
    baseURL: `${whisper.stack.gateway.url}/v1`,
    maxRetries: 0,
  });
  const viaClient = await client.audio.transcriptions.create({
    file: await toFile(audio.long, 'long.wav'),
    ...fields,
  });
  assert.deepEqual(viaClient, JSON.parse(first.text));
  assert.ok((viaClient as unknown as { duration: number }).duration > 30);
});

/** A body with the given content type, sent as is (fetch sets Content-Length from it). */
async function rawPost(path: string, contentType: string, body: Buffer): Promise<Response> {
  return fetch(`${whisper.stack.gateway.url}${path}`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': contentType },
    body,
  });
}

const BOUNDARY = '----switchboard-malformed';
const part = (headers: string, content: Buffer | string) =>
  Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\n${headers}\r\n\r\n`, 'latin1'),
    Buffer.from(content),
    Buffer.from('\r\n'),
  ]);
const closing = Buffer.from(`--${BOUNDARY}--\r\n`, 'latin1');

test('a malformed form → 400 invalid_request, in each route’s error shape', async () => {
  const wav = await audio.speech('wav');
  const fileWith = (filename: string) =>
    part(
      `Content-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: audio/wav`,
      wav,
    );
  const language = part('Content-Disposition: form-data; name="language"', 'en');
  const cases: [string, string, Buffer][] = [
    ['no boundary', 'multipart/form-data', Buffer.concat([language, fileWith('a.wav'), closing])],
    [
      'an empty boundary',
      'multipart/form-data; boundary=',
      Buffer.concat([language, fileWith('a.wav'), closing]),
    ],
    [
      'a body cut short (no closing boundary)',
      `multipart/form-data; boundary=${BOUNDARY}`,
      Buffer.concat([language, fileWith('a.wav')]).subarray(0, 2000),
    ],
    [
      'a body that ends after the file, without the closing boundary',
      `multipart/form-data; boundary=${BOUNDARY}`,
      Buffer.concat([language, fileWith('a.wav')]),
    ],
    [
      'a NUL in the file name',
      `multipart/form-data; boundary=${BOUNDARY}`,
      Buffer.concat([fileWith('a\0.wav'), closing]),
    ],
    [
      'another control character in the file name',
      `multipart/form-data; boundary=${BOUNDARY}`,
      Buffer.concat([fileWith('a\x1b[31m.wav'), closing]),
    ],
  ];
  for (const [what, contentType, body] of cases) {
    const plain = await rawPost('/transcribe', contentType, body);
    assert.equal(plain.status, 400, `/transcribe, ${what}: ${await plain.clone().text()}`);
    assert.equal((await errorOf(plain)).code, 'invalid_request', `/transcribe, ${what}`);

    const openai = await rawPost('/v1/audio/transcriptions', contentType, body);
    assert.equal(openai.status, 400, `/v1, ${what}: ${await openai.clone().text()}`);
    const { error } = (await openai.json()) as { error: { type: string; code: string; message: string } };
    assert.equal(error.type, 'invalid_request_error', `/v1, ${what}`);
    assert.equal(error.code, 'invalid_request', `/v1, ${what}`);
    assert.ok(!/\bat .+:\d+:\d+/.test(error.message), 'no stack trace');
  }
  // The worker is not left with any of them: a well-formed request still works at once.
  const ok = await post('/transcribe', form(wav, 'a.wav', { language: 'en' }, {}));
  assert.equal(ok.status, 200, ok.text);
  assert.equal(await whisper.worker.metric('whisper_uploads_in_progress'), 0);
});
