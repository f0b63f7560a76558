// Continuous batching on the trained TinyStories-656K of the published model files beside the
// checkout (read in place; every test skips, naming the folder, without them), in fp32
// on ONNX Runtime: what a request generates must not depend on what else is in the batch — mixed
// prompt lengths, requests joining mid-flight, a neighbour cancelled, seeded sampling — and the
// loop's limits hold: chunked prompt reading between steps, the cache budget, the queue, and a
// reader that falls behind.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isSwitchboardError } from '@switchboard/errors';
import { useLocalModels } from '@switchboard/models';
import { needsPublishedModels, publishedModelPath } from '@switchboard/models-dev/published-models';
import { loadCausalLm } from '../adapters/causal-lm.js';
import { DecodeLoop, type DecodeLoopLimits } from './decode-loop.js';
import type { FinishReason, GenerationRequest } from './generation.js';
import type { LanguageModel } from './model.js';

const MODEL = 'TinyStories-656K';
const needsModel = { skip: needsPublishedModels('llm', MODEL) };

let model: LanguageModel;
/** Model passes in order, to see how prompt reading and batch steps interleave. */
const passes: string[] = [];

before(async () => {
  if (needsModel.skip !== false) return;
  useLocalModels(publishedModelPath('llm'));
  const loaded = await loadCausalLm(
    { id: MODEL, dir: '', description: '' },
    { providers: ['cpu'], deviceId: 0, intraOpThreads: 1 },
  );
  // The same model, with every pass recorded: `join:<prompts>` for new prompts read together,
  // `read:<tokens>` for a long prompt's chunk, `step:<rows>` for a decoding step.
  model = {
    ...loaded,
    prefill() {
      const prefill = loaded.prefill();
      return Object.assign(prefill, {
        feed: ((feed) => (ids: readonly number[]) => {
          passes.push(`read:${ids.length}`);
          return feed(ids);
        })(prefill.feed.bind(prefill)),
      });
    },
    openBatch() {
      const batch = loaded.openBatch();
      const step = batch.step.bind(batch);
      const join = batch.join.bind(batch);
      batch.step = (tokens) => {
        passes.push(`step:${tokens.length}`);
        return step(tokens);
      };
      batch.join = (prompts) => {
        passes.push(`join:${prompts.length}`);
        return join(prompts);
      };
      return batch;
    },
  };
});
after(async () => {
  await model?.dispose();
});

const limits: DecodeLoopLimits = {
  maxBatch: 8,
  cacheTokens: 16_384,
  prefillChunkTokens: 64,
  queueDepth: 16,
  streamBufferEvents: 1024,
};

function request(
  prompt: string,
  maxTokens: number,
  sampling: Partial<GenerationRequest> = {},
): GenerationRequest {
  return {
    promptIds: model.encode(prompt),
    maxTokens,
    temperature: 0,
    topP: 1,
    seed: 0n,
    stop: [],
    ...sampling,
  };
}

interface Result {
  text: string;
  finishReason: FinishReason;
  tokens: number;
}

/** Runs one request to its end; `onDelta` is called after each text event (to act mid-flight). */
async function generate(
  loop: DecodeLoop,
  req: GenerationRequest,
  options: { signal?: AbortSignal; onDelta?: (count: number) => void; owner?: string } = {},
): Promise<Result> {
  let text = '';
  let deltas = 0;
  const signal = options.signal ?? new AbortController().signal;
  for await (const event of loop.generate(req, signal, undefined, options.owner)) {
    if (event.type === 'delta') {
      text += event.text;
      options.onDelta?.(++deltas);
    } else {
      return { text, finishReason: event.finishReason, tokens: event.completionTokens };
    }
  }
  throw new Error('no done event');
}

/** Each request run alone, one after the other, on a loop of its own. */
async function alone(requests: GenerationRequest[]): Promise<Result[]> {
  const loop = new DecodeLoop(model, { ...limits, maxBatch: 1 });
  const results: Result[] = [];
  for (const req of requests) results.push(await generate(loop, req));
  return results;
}

const rowsRun = () => passes.filter((p) => p.startsWith('step:')).map((p) => Number(p.slice('step:'.length)));

const mixed = () => [
  request('Once upon a time', 48),
  request(
    'Tom and his dog went to the park. They played with a red ball until the sun went down, and then',
    30,
  ),
  request('Lily', 70),
  request('One day, a little bird', 5),
];

test(
  'greedy: every request of a batch of mixed prompt lengths and lengths gives exactly its text alone',
  needsModel,
  async () => {
    const expected = await alone(mixed());
    passes.length = 0;
    const loop = new DecodeLoop(model, limits);
    const batched = await Promise.all(mixed().map((req) => generate(loop, req)));
    assert.deepEqual(batched, expected);
    assert.equal(Math.max(...rowsRun()), 4, 'all four decoded in one batch');
    assert.equal(passes[0], 'join:1', 'the first arrived alone and started at once');
    assert.equal(passes.filter((p) => p.startsWith('join:')).length, 2, 'the other three were read together');
    assert.equal(loop.activeCount, 0);
    // The first request's text is the README's greedy reference for this prompt.
    assert.match(expected[0]!.text, /^, a little girl named Lily lived in a small house with her mom, dad,/);
  },
);

test(
  'requests joining mid-flight, and a neighbour cancelled mid-flight, change nobody else',
  needsModel,
  async () => {
    const [first, second, third] = [
      request('Once upon a time', 120),
      request('The sun was', 40),
      request('Ben had a', 60),
    ];
    const expected = await alone([first, second, third]);
    passes.length = 0;
    const loop = new DecodeLoop(model, limits);
    const cancel = new AbortController();
    const joined: Promise<Result>[] = [];
    let cancelled: Promise<unknown> | undefined;
    const firstResult = generate(loop, first, {
      onDelta: (count) => {
        // Two join while the first is 10 tokens in; a third joins at 20 and is cancelled at 40.
        if (count === 10) joined.push(generate(loop, second), generate(loop, third));
        if (count === 20) {
          cancelled = generate(loop, request('A big red', 200), {
            signal: cancel.signal,
            onDelta: (own) => {
              if (own === 20) cancel.abort(new Error('the client went away'));
            },
          }).catch((error: unknown) => error);
        }
      },
    });
    assert.deepEqual(await firstResult, expected[0]);
    assert.deepEqual(await Promise.all(joined), expected.slice(1));
    assert.match(String(await cancelled), /the client went away/);
    const rows = rowsRun();
    assert.equal(rows[0], 1, 'the first started alone');
    assert.ok(Math.max(...rows) >= 3, `rows per step: ${rows.join(',')}`);
    assert.equal(loop.activeCount, 0, 'the cancelled request left the batch');
  },
);

test('seeded sampling is reproducible alone or batched; another seed differs', needsModel, async () => {
  const sampled = (seed: bigint) => request('Once upon a time', 40, { temperature: 0.9, topP: 0.95, seed });
  const [expected] = await alone([sampled(7n)]);
  const loop = new DecodeLoop(model, limits);
  const [batched, other] = await Promise.all([
    generate(loop, sampled(7n)),
    generate(loop, sampled(8n)),
    generate(loop, request('Lily', 60)),
  ]);
  assert.deepEqual(batched, expected);
  assert.notEqual(other.text, expected!.text);
});

test(
  'a long prompt is read in chunks between the batch steps, and gives its text alone',
  needsModel,
  async () => {
    const story =
      'Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball. She wanted to play with it, but it was too high. She asked her mom for help. ';
    const long = request(story.repeat(3), 20);
    assert.ok(long.promptIds.length > 48, `${long.promptIds.length} prompt tokens`);
    const chunked = { ...limits, prefillChunkTokens: 16 };
    const [expected] = await (async () => {
      const loop = new DecodeLoop(model, { ...chunked, maxBatch: 1 });
      return [await generate(loop, long)];
    })();
    passes.length = 0;
    const loop = new DecodeLoop(model, chunked);
    let longResult: Promise<Result> | undefined;
    await generate(loop, request('The cat', 60), {
      onDelta: (count) => {
        if (count === 5) longResult = generate(loop, long);
      },
    });
    assert.deepEqual(await longResult, expected);
    // Its chunks of 16 are read one per iteration, each but the last followed by a step of the
    // running batch alone; after the last, it decodes in the batch.
    const reads = passes.flatMap((p, i) => (i > 0 && p.startsWith('read:') ? [passes[i + 1]] : []));
    assert.equal(reads.length, Math.ceil(long.promptIds.length / 16), passes.join(' '));
    assert.ok(
      reads.slice(0, -1).every((next) => next === 'step:1'),
      passes.join(' '),
    );
    assert.equal(reads.at(-1), 'step:2');
  },
);

test(
  'the cache budget and the batch size bound who joins; beyond the queue, no_capacity with Retry-After',
  needsModel,
  async () => {
    // Each request reserves 5 + 30 = 35 positions: two rows of 35 fit in 80, three do not.
    const reqs = Array.from({ length: 3 }, () => request('Once upon a time', 30));
    passes.length = 0;
    const budgeted = new DecodeLoop(model, { ...limits, cacheTokens: 80 });
    const results = await Promise.all(reqs.map((req) => generate(budgeted, req)));
    assert.equal(Math.max(...rowsRun()), 2);
    assert.ok(results.every((r) => r.text === results[0]!.text));

    const small = new DecodeLoop(model, { ...limits, maxBatch: 1, queueDepth: 1 });
    const running = generate(small, request('Once upon a time', 30));
    const waiting = generate(small, request('Once upon a time', 30));
    assert.throws(
      () => small.generate(request('Once upon a time', 30), new AbortController().signal),
      (error) => isSwitchboardError(error) && error.code === 'no_capacity' && error.retryAfterSeconds! >= 1,
    );
    assert.equal(small.waitingCount, 1);
    await Promise.all([running, waiting]);
    // A request alone always runs, even over the budget.
    const tight = new DecodeLoop(model, { ...limits, cacheTokens: 10 });
    assert.equal((await generate(tight, request('Once upon a time', 30))).tokens, 30);
  },
);

test(
  'waiting requests join by owner in turns; a full queue refuses the heaviest owner rather than a newcomer',
  needsModel,
  async () => {
    const loop = new DecodeLoop(model, { ...limits, maxBatch: 1, queueDepth: 3 });
    const finished: string[] = [];
    const run = (name: string, owner: string) =>
      generate(loop, request('Once upon a time', 8), { owner }).then((result) => {
        finished.push(name);
        return result;
      });
    const heavy = ['h0', 'h1', 'h2', 'h3'].map((name) => run(name, 'heavy'));
    const light = run('l1', 'light');
    await assert.rejects(heavy[3]!, (error) => isSwitchboardError(error) && error.code === 'no_capacity');
    await Promise.all([light, ...heavy.slice(0, 3)]);
    assert.deepEqual(finished, ['h0', 'h1', 'l1', 'h2']);
  },
);

test(
  'a reader that falls behind is stopped with no_capacity; the others are not slowed or changed',
  needsModel,
  async () => {
    const [expected] = await alone([request('Lily', 60)]);
    const loop = new DecodeLoop(model, { ...limits, streamBufferEvents: 8 });
    // Takes one event, then stops reading while the batch goes on.
    const events = loop.generate(request('Once upon a time', 200), new AbortController().signal);
    const slow = events[Symbol.asyncIterator]();
    await slow.next();
    assert.deepEqual(await generate(loop, request('Lily', 60)), expected);
    let read = 0;
    await assert.rejects(
      (async () => {
        for (let next = await slow.next(); !next.done; next = await slow.next()) read += 1;
      })(),
      (error) =>
        isSwitchboardError(error) && error.code === 'no_capacity' && /read too slowly/.test(error.message),
    );
    assert.ok(read >= 8 && read <= 10, `${read} events were kept for it`);
    assert.equal(loop.activeCount, 0);
  },
);

test(
  'a failed pass fails its rows, a fault of the loop fails what it runs; the loop goes on',
  needsModel,
  async () => {
    const [expected] = await alone([request('Once upon a time', 12)]);
    // A decoding step that fails once: the rows in it get the error.
    let failStep = true;
    const failingPass: LanguageModel = {
      ...model,
      openBatch() {
        const batch = model.openBatch();
        const step = batch.step.bind(batch);
        batch.step = (tokens) => {
          if (!failStep) return step(tokens);
          failStep = false;
          return Promise.reject(new Error('the pass failed'));
        };
        return batch;
      },
    };
    const passLoop = new DecodeLoop(failingPass, limits);
    await assert.rejects(generate(passLoop, request('Once upon a time', 12)), /the pass failed/);
    assert.deepEqual(await generate(passLoop, request('Once upon a time', 12)), expected);

    // Text decoding that throws is no pass's fault but the loop's: what it runs fails, and the
    // loop starts afresh for the next request instead of taking the worker down.
    let decoderBroken = true;
    const faulty: LanguageModel = {
      ...model,
      decode(ids) {
        if (decoderBroken) throw new Error('the decoder broke');
        return model.decode(ids);
      },
    };
    const loop = new DecodeLoop(faulty, limits);
    await assert.rejects(generate(loop, request('Once upon a time', 12)), /the decoder broke/);
    decoderBroken = false;
    assert.deepEqual(await generate(loop, request('Once upon a time', 12)), expected);
    assert.equal(loop.activeCount, 0);
  },
);
