// Request bodies as D-ID documents them, and answers parsed field by field: an answer of the
// wrong shape is a vendor fault (VendorResponseError), never an `undefined` deep in the logic.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildScript,
  buildTalkBody,
  DEFAULT_VOICE,
  parseCreatedTalk,
  parseTalk,
  parseUpload,
  VendorResponseError,
} from './wire.js';

test('audio wins over text, and is sent as an audio script with the upload URL as given', () => {
  const script = buildScript(
    { text: 'hello', voice: 'x' },
    's3://d-id-audios-prod/u/a/audio.wav',
    DEFAULT_VOICE,
  );
  assert.deepEqual(script, { type: 'audio', audio_url: 's3://d-id-audios-prod/u/a/audio.wav' });
});

test('text is spoken by the given Microsoft voice, else the default one', () => {
  assert.deepEqual(
    buildScript({ text: ' Hi there ', voice: 'en-GB-SoniaNeural' }, undefined, DEFAULT_VOICE),
    {
      type: 'text',
      input: 'Hi there',
      provider: { type: 'microsoft', voice_id: 'en-GB-SoniaNeural' },
    },
  );
  assert.deepEqual(buildScript({ text: 'Hi' }, undefined, 'en-US-GuyNeural'), {
    type: 'text',
    input: 'Hi',
    provider: { type: 'microsoft', voice_id: 'en-US-GuyNeural' },
  });
  assert.equal(DEFAULT_VOICE, 'en-US-JennyNeural');
});

test('neither audio nor (non-blank) text gives no script', () => {
  assert.equal(buildScript({}, undefined, DEFAULT_VOICE), undefined);
  assert.equal(buildScript({ text: '   ' }, undefined, DEFAULT_VOICE), undefined);
});

test('the talk body has source_url, script and an mp4 config', () => {
  const body = buildTalkBody('s3://img', { type: 'audio', audio_url: 's3://aud' });
  assert.deepEqual(JSON.parse(JSON.stringify(body)), {
    source_url: 's3://img',
    script: { type: 'audio', audio_url: 's3://aud' },
    config: { result_format: 'mp4', stitch: true },
  });
});

test('uploads and created talks are read; a missing url or id is a vendor fault', () => {
  assert.deepEqual(parseUpload({ id: 'i1', url: 's3://x' }, 'POST /images'), { id: 'i1', url: 's3://x' });
  assert.deepEqual(parseUpload({ url: 's3://x' }, 'POST /images'), { id: undefined, url: 's3://x' });
  assert.throws(() => parseUpload({ id: 'i1' }, 'POST /images'), VendorResponseError);
  assert.throws(() => parseUpload([], 'POST /images'), VendorResponseError);
  assert.deepEqual(parseCreatedTalk({ id: 'tlk_1', status: 'created' }), { id: 'tlk_1' });
  assert.throws(() => parseCreatedTalk({ status: 'created' }), VendorResponseError);
});

test('every talk status is read, with result_url and duration when done and the fault when failed', () => {
  assert.deepEqual(parseTalk({ status: 'created' }), { status: 'created' });
  assert.deepEqual(parseTalk({ status: 'started' }), { status: 'started' });
  assert.deepEqual(parseTalk({ status: 'done', result_url: 'https://r/x.mp4', duration: 2.5 }), {
    status: 'done',
    resultUrl: 'https://r/x.mp4',
    duration: 2.5,
  });
  assert.deepEqual(parseTalk({ status: 'done', result_url: 'https://r/x.mp4', duration: 'long' }), {
    status: 'done',
    resultUrl: 'https://r/x.mp4',
    duration: undefined,
  });
  assert.throws(() => parseTalk({ status: 'done' }), VendorResponseError);
  assert.deepEqual(
    parseTalk({
      status: 'error',
      error: { kind: 'FaceError', description: 'No valid face detected', details: 'x' },
    }),
    { status: 'error', fault: { kind: 'FaceError', description: 'No valid face detected' } },
  );
  assert.deepEqual(parseTalk({ status: 'rejected' }), {
    status: 'rejected',
    fault: { kind: undefined, description: undefined },
  });
  assert.deepEqual(parseTalk({ status: 'validating' }), { status: 'unknown', raw: 'validating' });
  assert.throws(() => parseTalk({}), VendorResponseError);
  assert.throws(() => parseTalk('done'), VendorResponseError);
});
