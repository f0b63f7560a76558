// The tier's limit on a key's queued + running jobs, counted across every gateway replica: one KV
// entry per owner holding the ids of its active jobs, changed only by compare-and-set, so two
// replicas admitting at once cannot both take the last place.
import type { KV } from 'nats';
import { compareAndSet, readEntry } from './cas.js';

const codec = {
  decode: (bytes: Uint8Array) => JSON.parse(new TextDecoder().decode(bytes)) as string[],
  encode: (ids: string[]) => new TextEncoder().encode(JSON.stringify(ids)),
};

export class ActiveJobSlots {
  constructor(private readonly kv: KV) {}

  /**
   * Takes a place for `jobId` if the owner has fewer than `limit` active jobs. Ids whose jobs
   * have finished (a release lost to a crash) are dropped first, so the count heals itself.
   */
  async reserve(
    ownerKeyId: string,
    jobId: string,
    limit: number,
    stillActive: (jobId: string) => Promise<boolean>,
  ): Promise<boolean> {
    const held = (await readEntry(this.kv, ownerKeyId, codec.decode))?.value ?? [];
    const live = new Set<string>();
    if (held.length >= limit) {
      for (const id of held) if (await stillActive(id)) live.add(id);
    }
    let admitted = false;
    await compareAndSet(this.kv, ownerKeyId, codec, (ids) => {
      const kept = (ids ?? []).filter((id) => held.length < limit || live.has(id) || !held.includes(id));
      if (kept.includes(jobId)) {
        admitted = true;
        return undefined;
      }
      admitted = kept.length < limit;
      return admitted ? [...kept, jobId] : kept.length === (ids ?? []).length ? undefined : kept;
    });
    return admitted;
  }

  async release(ownerKeyId: string, jobId: string): Promise<void> {
    await compareAndSet(this.kv, ownerKeyId, codec, (ids) =>
      ids?.includes(jobId) ? ids.filter((id) => id !== jobId) : undefined,
    );
  }
}
