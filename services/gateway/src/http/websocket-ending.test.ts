import assert from 'node:assert/strict';
import { Duplex } from 'node:stream';
import { test } from 'node:test';
import { closeFrame, FrameBoundaries, RelayedWebSocket } from './websocket-ending.js';

/** A server frame (unmasked unless `mask` is given) with a payload of `length` bytes. */
function frame(length: number, mask?: Buffer): Buffer {
  const extended = length < 126 ? 0 : length < 65_536 ? 2 : 8;
  const head = Buffer.alloc(2 + extended);
  head[0] = 0x81;
  head[1] = (mask ? 0x80 : 0) | (extended === 0 ? length : extended === 2 ? 126 : 127);
  if (extended === 2) head.writeUInt16BE(length, 2);
  if (extended === 8) head.writeBigUInt64BE(BigInt(length), 2);
  return Buffer.concat([head, mask ?? Buffer.alloc(0), Buffer.alloc(length, 0x61)]);
}

test('frame boundaries are found for every length encoding, however the bytes are split', () => {
  const frames = [frame(0), frame(5), frame(300), frame(70_000), frame(10, Buffer.from([1, 2, 3, 4]))];
  const stream = Buffer.concat(frames);
  const ends = frames.reduce<number[]>((acc, f) => [...acc, (acc.at(-1) ?? 0) + f.length], []);
  for (const chunkSize of [1, 3, 7, 1000, stream.length]) {
    const boundaries = new FrameBoundaries();
    const seen: number[] = [];
    for (let at = 0; at < stream.length; at += chunkSize) {
      const chunk = stream.subarray(at, at + chunkSize);
      for (let i = 0; i < chunk.length; i++) {
        boundaries.advance(chunk.subarray(i, i + 1));
        if (boundaries.atBoundary) seen.push(at + i + 1);
      }
    }
    assert.deepEqual(seen, ends, `chunks of ${chunkSize}`);
  }
});

test('advance(untilBoundary) stops at the end of the frame in flight', () => {
  const boundaries = new FrameBoundaries();
  const two = Buffer.concat([frame(5), frame(5)]);
  assert.equal(boundaries.advance(two.subarray(0, 3)), 3);
  assert.equal(boundaries.atBoundary, false);
  assert.equal(boundaries.advance(two.subarray(3), true), 4, 'the rest of the first frame only');
  assert.equal(boundaries.atBoundary, true);
  assert.equal(boundaries.advance(two.subarray(7), true), 0, 'already at a boundary');
});

test('a close frame carries the code and a reason of at most 123 bytes', () => {
  const short = closeFrame(1008, 'unauthorized');
  assert.deepEqual([...short.subarray(0, 4)], [0x88, 14, 0x03, 0xf0]);
  assert.equal(short.subarray(4).toString(), 'unauthorized');
  assert.equal(closeFrame(1013, 'x'.repeat(500)).length, 4 + 123);
});

/** A client socket that records what is written to it and how it ends. */
class RecordingSocket extends Duplex {
  written: Buffer[] = [];
  ended = false;
  override _read(): void {}
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.written.push(Buffer.from(chunk));
    callback();
  }
  override _final(callback: () => void): void {
    this.ended = true;
    callback();
  }
  get bytes(): Buffer {
    return Buffer.concat(this.written);
  }
}

const head = 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n';

test('closing in the middle of a frame waits for its last byte, then sends the close frame and nothing more', async () => {
  const client = new RecordingSocket();
  const upstream = new RecordingSocket();
  const socket = new RelayedWebSocket(client);
  socket.attachUpstream(upstream);
  client.write(head);
  const first = frame(300);
  client.write(first.subarray(0, 100));
  socket.close(1008, 'ip_not_allowed');
  assert.equal(client.ended, false, 'not in the middle of a frame');
  client.write(Buffer.concat([first.subarray(100), frame(5)]));
  client.write(frame(7));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    client.bytes,
    Buffer.concat([Buffer.from(head), first, closeFrame(1008, 'ip_not_allowed')]),
    'the frame in flight, then the close frame; later frames are dropped',
  );
  assert.equal(client.ended, true);
  assert.equal(upstream.destroyed, true, 'the upstream side is stopped too');
});

test('at a frame boundary the close frame goes at once; before the upgrade the connection is cut', async () => {
  const client = new RecordingSocket();
  const socket = new RelayedWebSocket(client);
  client.write(head);
  client.write(frame(5));
  socket.close(1013, 'unavailable');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    client.bytes.subarray(-closeFrame(1013, 'unavailable').length),
    closeFrame(1013, 'unavailable'),
  );

  const early = new RecordingSocket();
  const cutEarly = new RelayedWebSocket(early);
  cutEarly.close(1008, 'unauthorized');
  assert.equal(early.destroyed, true);
  assert.equal(early.bytes.length, 0);
  const lateUpstream = new RecordingSocket();
  cutEarly.attachUpstream(lateUpstream);
  assert.equal(lateUpstream.destroyed, true, 'an upstream that answers afterwards is stopped at once');
});
