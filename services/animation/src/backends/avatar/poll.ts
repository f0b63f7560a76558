// Waiting for a talk: poll GET /talks/{id} with growing gaps through created → started → done,
// until the job's vendor deadline. A talk that never finishes fails `upstream_timeout` at the
// deadline (never a hang); one the vendor ends `error` or `rejected` fails `upstream_failed` with
// the vendor's own kind and description. A cancel ends the wait at once (sleep takes the signal).
import { pollDelayMs, sleep } from './backoff.js';
import type { CallContext, DidClient } from './client.js';
import { faultText, upstreamFailed, upstreamTimeout, type VendorErrorKind } from './errors.js';
import type { Talk } from './wire.js';

export type DoneTalk = Extract<Talk, { status: 'done' }>;

export interface PollOptions {
  readonly intervalMs: number;
  readonly deadlineMs: number;
  readonly apiKey: string;
  readonly onVendorError: (kind: VendorErrorKind) => void;
  readonly progress: (fraction: number) => void;
}

/** Progress while the vendor renders: from 0.3 towards 0.9, closer with each poll, never reaching it. */
export const startedProgress = (polls: number) => 0.9 - 0.6 * 0.85 ** Math.max(0, polls);

export async function waitForTalk(
  client: DidClient,
  id: string,
  ctx: CallContext,
  options: PollOptions,
): Promise<DoneTalk> {
  let last = 'created';
  let started = 0;
  for (let poll = 0; ; poll++) {
    const left = ctx.deadline - Date.now();
    const wait = pollDelayMs(poll, options.intervalMs);
    // No poll is sent that the deadline would cut short: the wait runs out the deadline instead.
    if (wait >= left) {
      if (left > 0) await sleep(left, ctx.signal);
      options.onVendorError('deadline');
      throw upstreamTimeout(
        `D-ID talk did not finish within the vendor deadline of ${options.deadlineMs} ms (last status: ${last})`,
      );
    }
    await sleep(wait, ctx.signal);
    const talk = await client.getTalk(id, ctx);
    switch (talk.status) {
      case 'created':
        options.progress(0.2);
        break;
      case 'started':
      case 'unknown':
        options.progress(startedProgress(started));
        started += 1;
        break;
      case 'done':
        return talk;
      case 'error':
      case 'rejected':
        options.onVendorError(talk.status === 'error' ? 'talk_error' : 'talk_rejected');
        throw upstreamFailed(`D-ID talk ended ${talk.status}${faultText(talk.fault, options.apiKey)}`);
    }
    const status = talk.status === 'unknown' ? talk.raw : talk.status;
    if (status !== last) ctx.logger.debug({ talk_id: id, status }, 'talk status changed');
    last = status;
  }
}
