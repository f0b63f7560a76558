// An upload whose first stream is refused by the worker's server (as a stream that crosses the
// GOAWAY of a server closing its connection is) is sent again and arrives whole. The worker here is
// a bare HTTP/2 server speaking gRPC's wire format: a real server refuses such a stream only when
// its GOAWAY and the client's new stream cross, which no test can time.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { createLogger } from '@switchboard/telemetry';
import { WhisperWorker } from './whisper.js';

/** What the server saw of one stream. */
interface SeenStream {
  dataBytes: number;
  refused: boolean;
}

const TRANSCRIBE = '/switchboard.whisper.v1.Whisper/Transcribe';
/** grpc.health.v1 HealthCheckResponse { status: SERVING }, length-prefixed. */
const SERVING = Buffer.from([0, 0, 0, 0, 2, 0x08, 0x01]);

/**
 * Refuses its first Transcribe stream `refuseAfterMs` after it opened (REFUSED_STREAM: no handler
 * ran); answers every later one, once its request has ended, with an empty message and status OK.
 * Health watches (the gateway's replica pool opens one) are told SERVING and left open.
 */
async function refusingFirstUpload(refuseAfterMs: number) {
  const streams: SeenStream[] = [];
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => sessions.add(session));
  server.on('stream', (stream, headers) => {
    // Closing a stream with an error code (the refusal) or with its session makes it emit one.
    stream.on('error', () => undefined);
    if (headers[':path'] !== TRANSCRIBE) {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
      stream.write(SERVING);
      return;
    }
    const seen: SeenStream = { dataBytes: 0, refused: false };
    streams.push(seen);
    stream.on('data', (chunk: Buffer) => (seen.dataBytes += chunk.length));
    if (streams.length === 1) {
      setTimeout(() => {
        seen.refused = true;
        stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      }, refuseAfterMs);
      return;
    }
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    // One length-prefixed message of no bytes: an empty TranscribeResponse.
    stream.on('end', () => stream.end(Buffer.alloc(5)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    streams,
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // The health watch stays open; its session goes with the server.
      for (const session of sessions) session.destroy();
      return closed;
    },
  };
}

test('an upload refused before the worker took it is sent again on a new stream, whole', async () => {
  const server = await refusingFirstUpload(200);
  const whisper = new WhisperWorker(
    { address: server.address, deadlineMs: 10_000, clusterSecret: 'secret' },
    createLogger({ service: 'test', level: 'silent' }),
  );
  try {
    const upload = whisper.transcribe({ requestId: 'r1', keyId: 'k1' });
    await upload.send({ options: { language: 'en', format: 'json', model: 'tiny' } });
    // 1 MiB, four times what grpc-js keeps to send a refused call again.
    const chunk = Buffer.alloc(64 * 1024, 1);
    for (let i = 0; i < 16; i++) await upload.send({ data: chunk });
    await upload.finish();

    assert.equal(server.streams.length, 2);
    assert.deepEqual(server.streams[0], { dataBytes: 0, refused: true }, 'nothing sent before the refusal');
    assert.ok(server.streams[1]!.dataBytes > 16 * chunk.length, `got ${server.streams[1]!.dataBytes} bytes`);
  } finally {
    whisper.close();
    await server.close();
  }
});
