// Idempotency-Key claims (the same key and body within 24 h give the same job): the first request
// with a key claims it for its body's hash and job id; a later one with the same key and body gets that job, with another body 422. The
// claim is a KV create, so of two concurrent duplicates exactly one wins; the bucket's 24 h max
// age ends every claim.
import { createHash } from 'node:crypto';
import type { KV } from 'nats';
import { compareAndSet, readEntry } from './cas.js';

interface Claim {
  readonly body_hash: string;
  readonly job_id: string;
  readonly claimed_at: string;
}

const codec = {
  decode: (bytes: Uint8Array) => JSON.parse(new TextDecoder().decode(bytes)) as Claim,
  encode: (claim: Claim) => new TextEncoder().encode(JSON.stringify(claim)),
};

export type ClaimOutcome =
  | { readonly kind: 'claimed' }
  | { readonly kind: 'duplicate'; readonly jobId: string }
  | { readonly kind: 'conflict' };

/** The header's value is hashed: it is the client's text, and KV keys allow few characters. */
const claimKey = (ownerKeyId: string, idempotencyKey: string): string =>
  `${ownerKeyId}.${createHash('sha256').update(idempotencyKey).digest('hex')}`;

export class IdempotencyClaims {
  constructor(private readonly kv: KV) {}

  /**
   * Claims `idempotencyKey` for `jobId`. A claim whose job never appeared (`jobExists` false
   * after `staleAfterMs`: its gateway died between claiming and creating) is taken over.
   */
  async claim(
    ownerKeyId: string,
    idempotencyKey: string,
    bodyHash: string,
    jobId: string,
    jobExists: (jobId: string) => Promise<boolean>,
    staleAfterMs = 30_000,
  ): Promise<ClaimOutcome> {
    const key = claimKey(ownerKeyId, idempotencyKey);
    const mine: Claim = { body_hash: bodyHash, job_id: jobId, claimed_at: new Date().toISOString() };
    for (;;) {
      const { value, changed } = await compareAndSet(this.kv, key, codec, (current) =>
        current === null ? mine : undefined,
      );
      if (changed) return { kind: 'claimed' };
      if (value === null) continue;
      if (value.body_hash !== bodyHash) return { kind: 'conflict' };
      const age = Date.now() - Date.parse(value.claimed_at);
      if (age < staleAfterMs || (await jobExists(value.job_id))) {
        return { kind: 'duplicate', jobId: value.job_id };
      }
      const replaced = await compareAndSet(this.kv, key, codec, (current) =>
        current?.job_id === value.job_id ? mine : undefined,
      );
      if (replaced.changed) return { kind: 'claimed' };
    }
  }

  /** Gives a claim back (the submission failed before its job existed), if it is still ours. */
  async release(ownerKeyId: string, idempotencyKey: string, jobId: string): Promise<void> {
    const key = claimKey(ownerKeyId, idempotencyKey);
    const current = await readEntry(this.kv, key, codec.decode);
    if (current?.value.job_id === jobId) await this.kv.delete(key);
  }
}
