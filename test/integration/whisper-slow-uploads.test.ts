// Slow uploads cost the whisper worker spool bytes, not recognition places: ten uploads of one key
// trickled in just above the gateway's minimum body rate (a WAV header, then a little at a time)
// — more than the worker's recognition concurrency plus its queue depth — must not keep another
// key's transcription from being answered at once. Through a real gateway and a real worker on the
// tiny Whisper model, with the worker's default capacity settings.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { makeAudioFixtures, wavHeader, type AudioFixtures } from '../support/audio.js';
import { sleep, type ModelStack, startModelStack, until } from '../support/stack.js';

const TRICKLED = 10;
/** Bytes per tick and ticks per second: 1.6 KB/s, above the gateway's 1 KB/s minimum body rate. */
const TICK_BYTES = 160;
const TICK_MS = 100;

let whisper: ModelStack;
let audio: AudioFixtures;
let slowKey: CreatedKey;
let otherKey: CreatedKey;

before(async () => {
  audio = await makeAudioFixtures();
  whisper = await startModelStack('whisper');
  // Enterprise: its many concurrent calls are within its own per-key limits.
  slowKey = await createKey(whisper.stack.gateway, { tier: 'enterprise', rate_limit_per_minute: 10_000 });
  otherKey = await createKey(whisper.stack.gateway, { rate_limit_per_minute: 10_000 });
});
after(async () => {
  await whisper?.stop();
  await audio?.remove();
});

/** A /transcribe upload that sends a WAV header and then a little quiet noise every tick, until `signal`. */
function trickle(signal: AbortSignal): Promise<unknown> {
  const boundary = `----switchboard${Math.random().toString(16).slice(2)}`;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(
        new TextEncoder().encode(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.wav"\r\n` +
            `Content-Type: audio/wav\r\n\r\n`,
        ),
      );
      controller.enqueue(wavHeader(3600));
    },
    async pull(controller) {
      await sleep(TICK_MS);
      // fetch does not cancel a request body when the request is aborted; stop producing here.
      if (signal.aborted) controller.close();
      else controller.enqueue(Uint8Array.from({ length: TICK_BYTES }, (_, i) => i & 0x0f));
    },
  });
  return fetch(`${whisper.stack.gateway.url}/transcribe`, {
    method: 'POST',
    headers: { ...bearer(slowKey.key), 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
    signal,
    duplex: 'half',
  }).catch((error: unknown) => error);
}

test(`${TRICKLED} trickled uploads of one key do not hold up another key's transcription`, async () => {
  const stop = new AbortController();
  const slow = Array.from({ length: TRICKLED }, () => trickle(stop.signal));
  try {
    const inProgress = () => whisper.worker.metric('whisper_uploads_in_progress');
    await until(
      async () => (await inProgress()) === TRICKLED,
      'every trickled upload reached the worker',
      15_000,
    );

    const form = new FormData();
    form.append('language', 'en');
    form.append('file', new Blob([await audio.speech('wav')]), 'speech.wav');
    const started = Date.now();
    const res = await fetch(`${whisper.stack.gateway.url}/transcribe`, {
      method: 'POST',
      headers: bearer(otherKey.key),
      body: form,
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    const seconds = (Date.now() - started) / 1000;
    assert.equal(res.status, 200, text);
    assert.ok(seconds < 10, `answered in ${seconds} s`);
    assert.equal(res.headers.get('content-language'), 'en');
    // The trickled uploads were still arriving the whole time.
    assert.equal(await inProgress(), TRICKLED);
  } finally {
    stop.abort();
    await Promise.all(slow);
  }
  await until(
    async () => (await whisper.worker.metric('whisper_uploads_in_progress')) === 0,
    'the abandoned uploads are gone from the worker',
    15_000,
  );
  assert.equal(await whisper.worker.metric('whisper_spool_bytes'), 0, 'their spooled bytes were given back');
});
