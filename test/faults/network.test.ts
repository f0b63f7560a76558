// The network between a gateway and its workers going bad, with a TCP fault proxy in the path to
// the llm and diffusion workers while a mix of calls runs to the others: added latency, connections
// reset mid-stream, and a black hole. Deadlines fire as configured, a stream that had started ends
// with an SSE error event, no request hangs past its deadline, calls to the other workers are
// untouched, and the path serves again once it is back.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer } from '../support/admin.js';
import { startFaultCluster, type FaultCluster } from '../support/fault-cluster.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { startMixedLoad, type MixedLoad } from '../support/mixed-load.js';
import { until } from '../support/stack.js';

/** The gateways' deadline for llm and diffusion calls here, short so a black hole shows it. */
const DEADLINE_MS = 6_000;
/** How far past its deadline a call may end: the gateway's own work and this machine's load. */
const SLACK_MS = 4_000;
/** How soon after the path is back calls must succeed again. */
const RECOVERY_MS = 10_000;

interface Answer {
  status: number;
  /** The `error.code` of a JSON answer, or of the SSE error event that ended a stream. */
  code?: string;
  /** For streams: whether any generated piece came before the end. */
  pieces: number;
  /** Whether a stream ended with `data: [DONE]`. */
  done: boolean;
  ms: number;
}

describe('network faults between the gateway and a worker', { timeout: 15 * 60_000 }, () => {
  let c: FaultCluster;
  let load: MixedLoad;
  const proxies = new Map<string, FaultProxy>();
  const proxy = (worker: 'llm' | 'diffusion') => proxies.get(worker)!;
  const setAll = (mode: Parameters<FaultProxy['set']>[0]) => {
    for (const p of proxies.values()) p.set(mode);
  };

  before(async () => {
    c = await startFaultCluster({
      gateways: 1,
      workerAddress: async (worker, real) => {
        if (worker !== 'llm' && worker !== 'diffusion') return real;
        const p = await startFaultProxy(real);
        proxies.set(worker, p);
        return p.address;
      },
      gatewayEnv: { LLM_DEADLINE_MS: String(DEADLINE_MS), DIFFUSION_DEADLINE_MS: String(DEADLINE_MS) },
    });
    // Calls to the workers whose path is sound, to see that nothing spills over.
    load = await startMixedLoad({
      gateways: c.gateways.map((g) => g.url),
      key: c.key.key,
      siteOrigin: c.site.origin,
      routes: ['transcribe', 'browser', 'animate', 'usage'],
    });
    await load.untilSucceeded(1, 180_000);
  });

  after(async () => {
    await load?.stop();
    await c?.stop();
    for (const p of proxies.values()) await p.close();
  });

  const post = (path: string, body: unknown) =>
    fetch(`${c.gateways[0]!.url}${path}`, {
      method: 'POST',
      headers: { ...bearer(c.key.key), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  const errorCode = (text: string) => {
    try {
      return (JSON.parse(text) as { error?: { code?: string } }).error?.code;
    } catch {
      return undefined;
    }
  };

  /** One image, small and quick. */
  async function image(): Promise<Answer> {
    const started = Date.now();
    const res = await post('/generate-image', { prompt: 'a kite', width: 64, height: 64, steps: 2, seed: 4 });
    const text = await res.text();
    return { status: res.status, code: errorCode(text), pieces: 0, done: res.ok, ms: Date.now() - started };
  }

  /**
   * A streamed completion, read as it comes: a short one by default, one that runs well past the
   * deadline when `onPiece` is given, which runs at its first generated piece (to break the path
   * mid-stream).
   */
  async function stream(onPiece?: () => void): Promise<Answer> {
    const started = Date.now();
    const res = await post('/query', {
      prompt: 'Once upon a time',
      stream: true,
      max_tokens: onPiece ? 2000 : 60,
      temperature: 0,
    });
    if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
      const text = await res.text();
      return { status: res.status, code: errorCode(text), pieces: 0, done: false, ms: Date.now() - started };
    }
    const answer: Answer = { status: res.status, pieces: 0, done: false, ms: 0 };
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of res.body!) {
      buffered += decoder.decode(chunk as Uint8Array, { stream: true });
      const events = buffered.split('\n\n');
      buffered = events.pop()!;
      for (const event of events) {
        if (!event.startsWith('data: ')) continue;
        const data = event.slice('data: '.length);
        if (data === '[DONE]') answer.done = true;
        else {
          const parsed = JSON.parse(data) as { error?: { code: string } };
          if (parsed.error) answer.code = parsed.error.code;
          else if (answer.pieces++ === 0) onPiece?.();
        }
      }
    }
    answer.ms = Date.now() - started;
    return answer;
  }

  /** Once the path is back: calls through it succeed again within RECOVERY_MS. */
  async function recovers() {
    setAll({ kind: 'pass' });
    const back = Date.now();
    let last: Answer[] = [];
    await until(
      async () => {
        last = await Promise.all([image(), stream()]);
        return last.every((a) => a.status === 200 && a.done && a.code === undefined);
      },
      'llm and diffusion serve again through the restored path',
      RECOVERY_MS + 2 * (DEADLINE_MS + SLACK_MS),
    );
    const after = Date.now() - back;
    // The last try may have started up to RECOVERY_MS after the path came back.
    assert.ok(
      after <= RECOVERY_MS + 2 * DEADLINE_MS,
      `served again only ${after} ms after the path was back`,
    );
  }

  /** Calls to the other workers that failed since `t`: none may. */
  function othersFailedSince(t: number) {
    const failed = load.inFlightDuring(t, Date.now()).filter((call) => call.end !== undefined && !call.ok);
    assert.deepEqual(failed, [], `calls to workers on a sound path failed:\n${load.describe(failed)}`);
  }

  /**
   * Cut off by the deadline, in time: a unary call answers `504 upstream_timeout`; a stream, which
   * has started by then, ends with an `upstream_timeout` error event and [DONE].
   */
  function endedAtDeadline(answer: Answer, kind: 'unary' | 'stream') {
    const seen = kind === 'unary' ? [answer.status, answer.code] : [answer.status, answer.code, answer.done];
    const expected = kind === 'unary' ? [504, 'upstream_timeout'] : [200, 'upstream_timeout', true];
    assert.deepEqual(seen, expected, `${kind}: ${JSON.stringify(answer)}`);
    assert.ok(answer.ms <= DEADLINE_MS + SLACK_MS, `${kind} ended after ${answer.ms} ms`);
  }

  it('added latency: calls are slower but succeed within their deadline', async () => {
    const t = Date.now();
    const quick = await image();
    setAll({ kind: 'latency', ms: 300 });
    const [slowImage, slowStream] = await Promise.all([image(), stream()]);
    assert.equal(slowImage.status, 200, `image through 300 ms of latency: ${JSON.stringify(slowImage)}`);
    assert.ok(slowImage.ms >= quick.ms + 2 * 300 - 50, `the image took ${slowImage.ms} ms, not delayed`);
    assert.ok(slowStream.done && slowStream.code === undefined, `stream: ${JSON.stringify(slowStream)}`);
    await recovers();
    othersFailedSince(t);
  });

  it('latency past the deadline: 504 upstream_timeout at the deadline, not a hang', async () => {
    const t = Date.now();
    // There and back takes longer than the deadline.
    setAll({ kind: 'latency', ms: DEADLINE_MS });
    const [img, str] = await Promise.all([image(), stream()]);
    endedAtDeadline(img, 'unary');
    // Past STREAM_FIRST_EVENT_WAIT_MS the stream has started, so its end is an error event.
    endedAtDeadline(str, 'stream');
    await recovers();
    othersFailedSince(t);
  });

  it('connections reset mid-stream: the stream ends with an error event; unary calls get 503', async () => {
    const t = Date.now();
    const cut = await stream(() => proxy('llm').set({ kind: 'reset' }));
    assert.equal(cut.status, 200);
    assert.ok(cut.pieces > 0, 'the stream had started');
    assert.deepEqual([cut.code, cut.done], ['unavailable', true], `stream: ${JSON.stringify(cut)}`);
    // While every connection is refused, a new call fails fast and cleanly.
    setAll({ kind: 'reset' });
    const [img, str] = await Promise.all([image(), stream()]);
    assert.deepEqual([img.status, img.code], [503, 'unavailable'], `image: ${JSON.stringify(img)}`);
    assert.deepEqual([str.status, str.code], [503, 'unavailable'], `stream: ${JSON.stringify(str)}`);
    assert.ok(img.ms < DEADLINE_MS && str.ms < DEADLINE_MS, 'refused calls failed fast');
    await recovers();
    othersFailedSince(t);
  });

  it('black hole: calls end at their deadline (a started stream with an error event), then serve again', async () => {
    const t = Date.now();
    const cut = await stream(() => proxy('llm').set({ kind: 'blackhole' }));
    assert.ok(cut.pieces > 0, 'the stream had started');
    endedAtDeadline(cut, 'stream');

    setAll({ kind: 'blackhole' });
    const [img, str] = await Promise.all([image(), stream()]);
    endedAtDeadline(img, 'unary');
    endedAtDeadline(str, 'stream');
    await recovers();
    othersFailedSince(t);
  });
});
