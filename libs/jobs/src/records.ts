// Job records in the jobs bucket, keyed `<owner key id>.<job id>`: a caller can only ever name
// its own jobs (another key's id is simply not there), and one owner's jobs are one key filter.
import type { KV } from 'nats';
import { compareAndSet, readEntry } from './cas.js';
import { isJobId } from './ids.js';
import { decodeRecord, encodeRecord, type JobRecord, type JobStatus } from './record.js';

const codec = { decode: decodeRecord, encode: encodeRecord };

const recordKey = (ownerKeyId: string, jobId: string): string => `${ownerKeyId}.${jobId}`;

/** KV keys allow `[-/_=.a-zA-Z0-9]`; anything else cannot be a key id we issued. */
const SAFE_TOKEN = /^[-_=a-zA-Z0-9]{1,128}$/;

export interface ListOptions {
  readonly status?: JobStatus | undefined;
  readonly limit: number;
  /** The last job id of the previous page: only older jobs follow. */
  readonly after?: string | undefined;
}

export interface JobPage {
  readonly data: JobRecord[];
  readonly has_more: boolean;
}

export class JobRecords {
  constructor(readonly kv: KV) {}

  async create(record: JobRecord): Promise<void> {
    await this.kv.create(recordKey(record.owner_key_id, record.job_id), encodeRecord(record));
  }

  /** The owner's job, or null (also for a malformed id or another owner's job). */
  async get(ownerKeyId: string, jobId: string): Promise<JobRecord | null> {
    if (!SAFE_TOKEN.test(ownerKeyId) || !isJobId(jobId)) return null;
    return (await readEntry(this.kv, recordKey(ownerKeyId, jobId), decodeRecord))?.value ?? null;
  }

  /** Whoever owns it (the admin dashboard). */
  async findOwner(jobId: string): Promise<string | null> {
    if (!isJobId(jobId)) return null;
    for await (const key of await this.kv.keys(`*.${jobId}`)) return key.slice(0, key.indexOf('.'));
    return null;
  }

  /**
   * Moves a record with compare-and-set: `change` sees the current record and returns the next
   * one, or undefined to leave it. Returns the record as it is afterwards (null if missing).
   */
  async update(
    ownerKeyId: string,
    jobId: string,
    change: (current: JobRecord) => JobRecord | undefined,
  ): Promise<{ record: JobRecord | null; changed: boolean }> {
    if (!SAFE_TOKEN.test(ownerKeyId) || !isJobId(jobId)) return { record: null, changed: false };
    const { value, changed } = await compareAndSet(this.kv, recordKey(ownerKeyId, jobId), codec, (current) =>
      current === null ? undefined : change(current),
    );
    return { record: value, changed };
  }

  /** Newest first; `ownerKeyId` null = every owner. */
  async list(ownerKeyId: string | null, options: ListOptions): Promise<JobPage> {
    if (ownerKeyId !== null && !SAFE_TOKEN.test(ownerKeyId)) return { data: [], has_more: false };
    const keys: string[] = [];
    for await (const key of await this.kv.keys(ownerKeyId === null ? '*.*' : `${ownerKeyId}.*`)) {
      keys.push(key);
    }
    const jobIdOf = (key: string) => key.slice(key.indexOf('.') + 1);
    keys.sort((a, b) => (jobIdOf(a) < jobIdOf(b) ? 1 : jobIdOf(a) > jobIdOf(b) ? -1 : 0));
    const data: JobRecord[] = [];
    for (const key of keys) {
      if (options.after !== undefined && jobIdOf(key) >= options.after) continue;
      const entry = await readEntry(this.kv, key, decodeRecord);
      if (!entry || (options.status !== undefined && entry.value.status !== options.status)) continue;
      if (data.length === options.limit) return { data, has_more: true };
      data.push(entry.value);
    }
    return { data, has_more: false };
  }
}
