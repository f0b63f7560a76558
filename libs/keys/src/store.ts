import { retryCreationRace } from '@switchboard/events';
import type { KV, KvEntry, NatsConnection } from 'nats';
import { SwitchboardError, dependencyUnavailable } from '@switchboard/errors';
import { formatApiKey, isKeyId, keyPrefix, newKeyId, newSecret } from './format.js';
import { encodeRecord, isConflict, WRITE_ATTEMPTS } from './kv-write.js';
import { migrateLegacyHashes, unmigratedLegacySecrets } from './legacy-migration.js';
import { isKeyRecord, viewFields, type KeyRecord, type PublicKeyView, type StoredSecret } from './record.js';
import { PEPPERED_ALG, SecretHasher } from './secret-hash.js';
import { UsageTracker } from './usage.js';
import {
  validateCreate,
  validateGraceSeconds,
  validatePatch,
  type CreateKeyInput,
  type KeyPatch,
} from './validate.js';
import { KeyView } from './view.js';
import type { Logger } from '@switchboard/telemetry';
import { watchBucket, type BucketWatch } from './watch.js';

export interface KeyStoreOptions {
  /**
   * KEY_PEPPER: the key secrets are hashed with (secret-hash.ts). Every replica needs the same one;
   * it never goes to the store.
   */
  pepper: string;
  /** KV bucket of key records; last-used times go to `<bucket>_usage`. */
  bucket?: string;
  logger?: Logger;
  /** How often last-used times are written (default 30 s). */
  usageFlushIntervalMs?: number;
  /**
   * The one-time upgrade of records from before peppering (legacy-migration.ts): when set (ms since
   * the epoch), open() first migrates the legacy entries of records the store wrote before then.
   */
  migrateLegacyWrittenBefore?: number;
}

export interface IssuedKey {
  record: KeyRecord;
  /** The full API key: returned by create/rotate only, never stored. */
  key: string;
}

export const DEFAULT_BUCKET = 'switchboard_keys';
const DEFAULT_FLUSH_MS = 30_000;
/** How long list() waits for this replica's view to catch up with the bucket. */
const CATCH_UP_MS = 2_000;

function notFound(): SwitchboardError {
  return new SwitchboardError('not_found', { message: 'No such key.' });
}

/**
 * A failure of NATS itself (disconnected, request timed out) means the store is unreachable: the
 * caller gets 503 `unavailable` and may retry, never a 500 for an outage.
 */
function unreachable(error: unknown): SwitchboardError {
  if (error instanceof SwitchboardError) return error;
  return dependencyUnavailable('The key store is unreachable; retry shortly.', error);
}

/** A read of the bucket whose NATS failure reaches the caller as `unreachable`. */
function reaching<T>(read: Promise<T>): Promise<T> {
  return read.catch((error: unknown) => {
    throw unreachable(error);
  });
}

/**
 * The key store every gateway replica shares: records in a NATS KV bucket, watched into a local
 * view so authenticate() is synchronous and never waits on the network, and a create, rotate or
 * revoke made on any replica reaches all of them as fast as NATS delivers (milliseconds).
 */
export class KeyStore {
  /** Resolves once the records present at open() are in the local view. */
  readonly ready: Promise<void>;
  private readonly view: KeyView;
  private seenRevision = 0;
  private revisionWaiters: { revision: number; resolve: () => void }[] = [];
  private loaded = false;
  private markLoaded!: () => void;
  private readonly watches: BucketWatch[] = [];
  private closed = false;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly kv: KV,
    private readonly hasher: SecretHasher,
    private readonly usage: UsageTracker,
    private readonly logger: Logger | undefined,
    flushIntervalMs: number,
  ) {
    this.view = new KeyView(hasher);
    this.ready = new Promise<void>((resolve) => (this.markLoaded = resolve)).then(() => {
      this.loaded = true;
    });
    this.timer = setInterval(() => void this.usage.flush(), flushIntervalMs);
    this.timer.unref(); // a flush timer alone must not keep a process alive
  }

  /**
   * Opens (creating if needed) the buckets and starts the watches. Does not wait for the initial
   * load, so a gateway can listen and report "not ready" meanwhile: await `ready` for that.
   */
  static async open(nc: NatsConnection, options: KeyStoreOptions): Promise<KeyStore> {
    const bucket = options.bucket ?? DEFAULT_BUCKET;
    const hasher = new SecretHasher(options.pepper);
    const js = nc.jetstream();
    // history 1: the store needs only the current record; revisions still order writes.
    // Gateway replicas starting together create the same buckets.
    const [kv, usageKv] = await retryCreationRace(async () => [
      await js.views.kv(bucket, { history: 1 }),
      await js.views.kv(`${bucket}_usage`, { history: 1 }),
    ]);
    // Before the watch starts, so the first load already holds the migrated records.
    if (options.migrateLegacyWrittenBefore !== undefined)
      await migrateLegacyHashes(kv, hasher, options.migrateLegacyWrittenBefore, options.logger);
    const store = new KeyStore(
      kv,
      hasher,
      new UsageTracker(usageKv, options.logger),
      options.logger,
      options.usageFlushIntervalMs ?? DEFAULT_FLUSH_MS,
    );
    try {
      await store.watch(bucket, usageKv);
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  private async watch(bucket: string, usageKv: KV): Promise<void> {
    this.watches.push(await watchBucket(this.kv, (e) => this.onKeyEntry(e), this.logger, bucket));
    this.watches.push(
      await watchBucket(usageKv, (e) => this.usage.onEntry(e), this.logger, `${bucket}_usage`),
    );
    void Promise.all(this.watches.map((w) => w.ready)).then(this.markLoaded);
  }

  /** For readiness probes: initial load done and the watches still running. */
  get isReady(): boolean {
    return this.loaded && !this.closed && this.watches.every((w) => w.active);
  }

  /** Hot path: parse, look up, compare in constant time. Local view only; null = 401. */
  authenticate(rawKey: unknown): KeyRecord | null {
    return this.view.authenticate(rawKey);
  }

  /** Notes that a key was used (cheap; written out by the periodic flush). */
  touch(id: string): void {
    if (isKeyId(id)) this.usage.touch(id); // only ids that are valid KV keys ever reach a flush
  }

  /** The admin view of a record, with this replica's best knowledge of its last use. */
  publicView(record: KeyRecord): PublicKeyView {
    return viewFields(record, this.usage.lastUsedAt(record.id));
  }

  /** Every key, revoked ones included, oldest first, once this replica has caught up with the bucket. */
  async list(): Promise<PublicKeyView[]> {
    await this.catchUp();
    return this.view
      .all()
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
      .map((record) => this.publicView(record));
  }

  /** One record, read from the bucket itself (not the view), so it is never stale. */
  async get(id: string): Promise<KeyRecord> {
    const entry = await this.read(id);
    return entry.record;
  }

  async create(input: CreateKeyInput): Promise<IssuedKey> {
    const fields = validateCreate(input);
    for (let attempt = 1; ; attempt++) {
      const id = newKeyId();
      const secret = newSecret();
      const record: KeyRecord = {
        id,
        ...fields,
        created_at: new Date().toISOString(),
        status: 'active',
        prefix: keyPrefix(id, secret),
        secrets: [this.storedSecret(id, secret)],
      };
      try {
        const revision = await this.kv.create(id, encodeRecord(record));
        this.view.apply(record, revision);
        return { record, key: formatApiKey(id, secret) };
      } catch (error) {
        // kv.create refuses an existing id: draw another (60 random bits make this theoretical).
        if (!isConflict(error) || attempt >= WRITE_ATTEMPTS) throw unreachable(error);
      }
    }
  }

  async update(id: string, patch: KeyPatch): Promise<KeyRecord> {
    const fields = validatePatch(patch);
    return this.mutate(id, (record) => ({ ...record, ...fields }));
  }

  /**
   * New secret, working at once. Older secrets keep working for `graceSeconds` (never longer
   * than an expiry they already had); 0 drops them now. Secrets already expired are pruned.
   */
  async rotate(id: string, graceSeconds = 0): Promise<IssuedKey> {
    const grace = validateGraceSeconds(graceSeconds);
    const secret = newSecret();
    const record = await this.mutate(id, (current) => {
      if (current.status !== 'active')
        throw new SwitchboardError('invalid_request', { message: 'A revoked key cannot be rotated.' });
      const now = Date.now();
      const graceEnd = now + grace * 1000;
      // Kept entries keep their `alg`: a legacy one stays as inert as it was.
      const kept: StoredSecret[] =
        grace === 0
          ? []
          : current.secrets
              .map((s) => {
                const end = s.expires_at === null ? graceEnd : Math.min(Date.parse(s.expires_at), graceEnd);
                return { secret: s, end };
              })
              .filter((s) => s.end > now)
              .map(({ secret: s, end }) => ({ ...s, expires_at: new Date(end).toISOString() }));
      return {
        ...current,
        prefix: keyPrefix(id, secret),
        secrets: [this.storedSecret(id, secret), ...kept],
      };
    });
    return { record, key: formatApiKey(id, secret) };
  }

  /** Refused everywhere from the moment replicas see it; the record stays, listed as revoked. */
  async revoke(id: string): Promise<KeyRecord> {
    return this.mutate(id, (current) => ({ ...current, status: 'revoked', secrets: [] }));
  }

  /** Stops watches and timers and writes pending last-used times. The NATS connection stays open. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    for (const watch of this.watches) watch.stop();
    for (const waiter of this.revisionWaiters) waiter.resolve();
    this.revisionWaiters = [];
    await this.usage.flush();
  }

  /** A new secret as stored: its peppered hash, never the secret. */
  private storedSecret(id: string, secret: string): StoredSecret {
    return { alg: PEPPERED_ALG, hash: this.hasher.hash(id, secret).toString('hex'), expires_at: null };
  }

  private onKeyEntry(entry: KvEntry): void {
    this.seenRevision = Math.max(this.seenRevision, entry.revision);
    if (entry.operation === 'PUT') {
      const value: unknown = entry.json();
      if (isKeyRecord(value) && value.id === entry.key) {
        this.view.apply(value, entry.revision);
        this.warnUnmigrated(value);
      } else this.logger?.warn({ key_id: entry.key }, 'malformed key record ignored');
    } else {
      this.view.remove(entry.key, entry.revision);
    }
    this.revisionWaiters = this.revisionWaiters.filter((w) => {
      if (w.revision > this.seenRevision) return true;
      w.resolve();
      return false;
    });
  }

  /**
   * Says which keys hold legacy hashes this replica refuses, so an operator who forgot the
   * migration (or sees a forged entry) learns which key it is.
   */
  private warnUnmigrated(record: KeyRecord): void {
    if (record.status !== 'active' || unmigratedLegacySecrets(record, this.hasher).length === 0) return;
    this.logger?.warn({ key_id: record.id }, 'key record holds unmigrated legacy hashes; they are refused');
  }

  /** Waits (bounded) until the watch has delivered everything the bucket held when called. */
  private async catchUp(): Promise<void> {
    await this.ready;
    const target = (await reaching(this.kv.status())).streamInfo.state.last_seq;
    if (this.seenRevision >= target || this.closed) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.revisionWaiters.push({ revision: target, resolve });
      timer = setTimeout(resolve, CATCH_UP_MS);
    });
    clearTimeout(timer);
  }

  private async read(id: string): Promise<{ record: KeyRecord; revision: number }> {
    if (!isKeyId(id)) throw notFound(); // also keeps odd strings away from KV subject syntax
    const entry = await reaching(this.kv.get(id));
    if (entry === null || entry.operation !== 'PUT') throw notFound();
    const value: unknown = entry.json();
    if (!isKeyRecord(value))
      throw new SwitchboardError('internal', { message: 'Stored key record is malformed.' });
    this.view.apply(value, entry.revision);
    return { record: value, revision: entry.revision };
  }

  /** Read–modify–write with the revision as precondition, retried when another writer won. */
  private async mutate(id: string, change: (current: KeyRecord) => KeyRecord): Promise<KeyRecord> {
    for (let attempt = 1; ; attempt++) {
      const { record, revision } = await this.read(id);
      const next = change(record);
      try {
        const written = await this.kv.update(id, encodeRecord(next), revision);
        this.view.apply(next, written); // read-your-writes on this replica, before the watch echoes it
        return next;
      } catch (error) {
        if (!isConflict(error) || attempt >= WRITE_ATTEMPTS) throw unreachable(error);
      }
    }
  }
}
