// Batched recognition through the real gateway and a real whisper worker process (tiny
// random-weight Whisper on ONNX Runtime, ffmpeg decoding): uploads sent at once share model
// passes (windows of different uploads, and of different languages, in one batch), and each
// transcript is exactly the one the same upload gives alone — the words are noise, so equality of
// everything (text, language, duration, segment times) is what shows that no row of a pass
// disturbed another.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { makeAudioFixtures, type AudioFixtures } from '../support/audio.js';
import { type ModelStack, startModelStack } from '../support/stack.js';

let whisper: ModelStack;
let key: CreatedKey;
let audio: AudioFixtures;

before(async () => {
  audio = await makeAudioFixtures();
  whisper = await startModelStack('whisper', {
    workerEnv: { WHISPER_CONCURRENCY: '1', WHISPER_MAX_BATCH: '4', WHISPER_QUEUE_DEPTH: '8' },
  });
  key = await createKey(whisper.stack.gateway, { tier: 'enterprise', rate_limit_per_minute: 10_000 });
});
after(async () => {
  await whisper?.stop();
  await audio?.remove();
});

interface Upload {
  readonly name: string;
  readonly file: Buffer;
  readonly language: string;
}

async function transcribe({ name, file, language }: Upload): Promise<unknown> {
  const form = new FormData();
  form.append('language', language);
  form.append('format', 'json');
  form.append('file', new Blob([file]), name);
  const res = await fetch(`${whisper.stack.gateway.url}/transcribe`, {
    method: 'POST',
    headers: bearer(key.key),
    body: form,
  });
  assert.equal(res.status, 200, await res.clone().text());
  return res.json();
}

test('4 uploads at once share passes, and each transcript is the one the same upload gives alone', async () => {
  const uploads: Upload[] = [
    // 45 s: two windows, both in flight at once.
    { name: 'long.wav', file: audio.long, language: 'en' },
    { name: 'speech.mp3', file: await audio.speech('mp3'), language: 'de' },
    { name: 'speech.ogg', file: await audio.speech('ogg'), language: 'fr' },
    { name: 'speech.m4a', file: await audio.speech('m4a'), language: 'en' },
  ];
  const windows = 5;

  const together = await Promise.all(uploads.map(transcribe));
  const passes = await whisper.worker.metric('whisper_batch_size_count');
  assert.equal(
    await whisper.worker.metric('whisper_batch_size_sum'),
    windows,
    'every window recognised once',
  );
  assert.ok(passes < windows, `${windows} windows in ${passes} passes: some pass held more than one`);
  assert.ok(
    (await whisper.worker.metric('whisper_batch_size_bucket', { le: '1' })) < passes,
    'a pass of more than one window',
  );

  for (const [i, upload] of uploads.entries()) {
    assert.deepEqual(together[i], await transcribe(upload), upload.name);
  }
  assert.equal(await whisper.worker.metric('whisper_queue_depth'), 0);
  assert.equal(await whisper.worker.metric('whisper_active_transcriptions'), 0);
});
