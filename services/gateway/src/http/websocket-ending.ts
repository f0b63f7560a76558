import type { Duplex } from 'node:stream';

/**
 * Ends a WebSocket the gateway relays byte for byte (http-proxy's upgrade: the upstream's frames
 * are piped to the client unparsed) with a proper close frame, so the client learns why: a
 * DevTools client sees code and reason rather than a dropped connection (1006).
 *
 * A close frame may only go between two frames: written into the middle of one, it would be read
 * as that frame's payload. So the client socket's writes are followed (frame headers only, never
 * the payloads), and a close asked for in the middle of a frame waits for that frame's last byte;
 * whatever the upstream sends after it is dropped. Before the upgrade completed there is no
 * WebSocket yet, and the connection is simply cut.
 */

/** RFC 6455 §7.4.1: the endpoint ends the connection because a message violates its policy. */
export const CLOSE_POLICY_VIOLATION = 1008;
/** IANA-registered: try again later (a server condition that should pass). */
export const CLOSE_TRY_AGAIN_LATER = 1013;

/** How long the frame in flight may take to end before the connection is cut anyway. */
const FRAME_END_WAIT_MS = 1_000;
/** How long the client has to answer the close frame before the socket is destroyed. */
const CLOSE_HANDSHAKE_MS = 1_000;
/** A control frame's payload is at most 125 bytes: the 2-byte code and up to 123 of reason. */
const REASON_MAX_BYTES = 123;

/** A server's close frame (unmasked, RFC 6455 §5.5.1). */
export function closeFrame(code: number, reason: string): Buffer {
  let text = Buffer.from(reason, 'utf8');
  if (text.length > REASON_MAX_BYTES) text = text.subarray(0, REASON_MAX_BYTES);
  const frame = Buffer.alloc(4 + text.length);
  frame[0] = 0x88; // FIN + opcode close
  frame[1] = 2 + text.length;
  frame.writeUInt16BE(code, 2);
  text.copy(frame, 4);
  return frame;
}

/**
 * Tracks where frames start and end in a byte stream. Knows only headers: 2 bytes, the extended
 * length (2 or 8 bytes), the masking key (4 bytes, if the mask bit is set); then it skips the
 * payload by its length.
 */
export class FrameBoundaries {
  private header: number[] = [];
  private payloadLeft = 0;

  get atBoundary(): boolean {
    return this.header.length === 0 && this.payloadLeft === 0;
  }

  /**
   * Follows `bytes`. With `untilBoundary` it stops at the first frame boundary (at once, when it
   * is at one) and returns how many bytes it followed; otherwise it follows them all.
   */
  advance(bytes: Uint8Array, untilBoundary = false): number {
    let at = 0;
    while (at < bytes.length) {
      if (untilBoundary && this.atBoundary) return at;
      if (this.payloadLeft > 0) {
        const skipped = Math.min(this.payloadLeft, bytes.length - at);
        this.payloadLeft -= skipped;
        at += skipped;
        continue;
      }
      this.header.push(bytes[at++]!);
      const length = headerLength(this.header);
      if (length !== undefined && this.header.length === length) {
        this.payloadLeft = payloadLength(this.header);
        this.header = [];
      }
    }
    return at;
  }
}

function headerLength(header: readonly number[]): number | undefined {
  if (header.length < 2) return undefined;
  const length7 = header[1]! & 0x7f;
  const extended = length7 === 126 ? 2 : length7 === 127 ? 8 : 0;
  const mask = header[1]! & 0x80 ? 4 : 0;
  return 2 + extended + mask;
}

function payloadLength(header: readonly number[]): number {
  const length7 = header[1]! & 0x7f;
  if (length7 < 126) return length7;
  const bytes = header.slice(2, length7 === 126 ? 4 : 10);
  return bytes.reduce((total, byte) => total * 256 + byte, 0);
}

type Write = (chunk: unknown, ...rest: unknown[]) => boolean;
type WriteCallback = (error?: Error | null) => void;

/** The whole HTTP head a successful upgrade answer starts with, as http-proxy writes it. */
function isUpgradeHead(chunk: unknown): boolean {
  const start =
    typeof chunk === 'string'
      ? chunk.slice(0, 12)
      : Buffer.isBuffer(chunk)
        ? chunk.toString('latin1', 0, 12)
        : '';
  return start === 'HTTP/1.1 101';
}

function asBytes(chunk: unknown, rest: unknown[]): Uint8Array {
  if (typeof chunk !== 'string') return chunk as Uint8Array;
  return Buffer.from(chunk, typeof rest[0] === 'string' ? (rest[0] as BufferEncoding) : 'utf8');
}

/**
 * One relayed WebSocket, seen from the gateway: the client's socket, whose writes it follows, and
 * once the upstream answered the upgrade, the upstream's socket.
 */
export class RelayedWebSocket {
  private readonly rawWrite: Write;
  private upgraded = false;
  private readonly frames = new FrameBoundaries();
  /** The close frame, once asked for; nothing more from the upstream goes out after it. */
  private closing: Buffer | undefined;
  /** Set once the close frame went out or the connection was cut. */
  private done = false;
  private upstream: Duplex | undefined;

  constructor(private readonly client: Duplex) {
    this.rawWrite = client.write.bind(client) as Write;
    client.write = ((chunk: unknown, ...rest: unknown[]) => this.write(chunk, rest)) as Duplex['write'];
  }

  /** The upstream's socket, so closing stops it too (the relay behind it sees the connection end). */
  attachUpstream(upstream: Duplex): void {
    this.upstream = upstream;
    // Cut while the upgrade was still on its way: the upstream connection has no client left.
    if (this.done) this.stopUpstream();
  }

  /** Ends the socket with `code` and `reason`; cut at once if it is not a WebSocket yet. */
  close(code: number, reason: string): void {
    if (this.closing || this.done) return;
    if (!this.upgraded) {
      this.cut();
      return;
    }
    this.closing = closeFrame(code, reason);
    if (this.frames.atBoundary) this.sendClose();
    else setTimeout(() => this.cut(), FRAME_END_WAIT_MS).unref();
  }

  private write(chunk: unknown, rest: unknown[]): boolean {
    if (this.done) {
      rest.find((r): r is WriteCallback => typeof r === 'function')?.();
      return true; // dropped: the upstream may still be flushing into the pipe
    }
    if (!this.upgraded) {
      this.upgraded = isUpgradeHead(chunk);
      return this.rawWrite(chunk, ...rest);
    }
    if (!this.closing) {
      this.frames.advance(asBytes(chunk, rest));
      return this.rawWrite(chunk, ...rest);
    }
    // Closing: the frame in flight goes out to its last byte, then the close frame; no more.
    const bytes = asBytes(chunk, rest);
    const upToBoundary = this.frames.advance(bytes, true);
    if (upToBoundary > 0) this.rawWrite(bytes.subarray(0, upToBoundary));
    if (this.frames.atBoundary) this.sendClose();
    rest.find((r): r is WriteCallback => typeof r === 'function')?.();
    return true;
  }

  private sendClose(): void {
    if (this.done) return;
    this.done = true;
    this.stopUpstream();
    this.rawWrite(this.closing);
    this.client.end();
    // The client answers with its own close frame and hangs up; one that does not is cut.
    this.client.resume();
    setTimeout(() => this.client.destroy(), CLOSE_HANDSHAKE_MS).unref();
  }

  private cut(): void {
    if (this.done) return;
    this.done = true;
    this.stopUpstream();
    this.client.destroy();
  }

  private stopUpstream(): void {
    if (!this.upstream) return;
    this.client.unpipe(this.upstream);
    this.upstream.destroy();
  }
}
