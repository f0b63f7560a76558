import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import type { EventPublisher } from '@switchboard/events';
import type { KeyRecord, KeyStore, TierPolicies } from '@switchboard/keys';
import type { Logger } from '@switchboard/telemetry';
import type { Capability, Meter, MeterValues, Quotas, UsageRecord, UsageStore } from '@switchboard/usage';
import type { GatewayMetrics } from '../ops/metrics.js';
import { quotasOfKey } from './key-quotas.js';
import { publishQuotaNotice } from './quota-events.js';
import { usageStoreUnavailable } from './store-unavailable.js';
import { RecordRetries, type PendingRecord, type RecordRetryOptions } from './record-retries.js';

/** A reservation outlives its call's deadline by this much before it stops counting on its own. */
export const RESERVATION_MARGIN_MS = 60_000;

export interface AdmitRequest {
  capability: Capability;
  /** The model asked for, when known up front; record() may name the one that served instead. */
  model?: string | null;
  /** Amounts known before the work starts, held against the key's quotas until settled. */
  reserve?: MeterValues;
  /** Meters the work will spend but whose amount is known only after: refused once used up. */
  check?: readonly Meter[];
  /** The longest the work may take: an unsettled reservation stops counting after it. */
  deadlineMs: number;
  /** The record id when the work has one of its own (a job); otherwise one is made for the call. */
  id?: string;
}

export interface MeteringDeps {
  usage: UsageStore;
  events: EventPublisher;
  metrics: GatewayMetrics;
  logger: Logger;
  keys: Pick<KeyStore, 'get'>;
  config: { tiers: TierPolicies };
}

/**
 * The gateway's side of usage: every call that does work is admitted against the key's quotas
 * before its worker is called and recorded once it is done, in the one store every replica shares.
 * Work that could not be recorded is not started (the store unreachable → 503 unavailable).
 */
export class Metering {
  private readonly retries: RecordRetries;

  constructor(
    private readonly deps: MeteringDeps,
    retryOptions?: RecordRetryOptions,
  ) {
    this.retries = new RecordRetries(
      (pending) => this.write(pending),
      deps.logger,
      (outcome) => deps.metrics.usageRecordFailures.inc({ outcome }),
      retryOptions,
    );
  }

  /** Records waiting to be written again. */
  get retrying(): number {
    return this.retries.size;
  }

  /**
   * Reserves or checks the key's quotas for one call: 429 quota_exceeded (param = the meter,
   * Retry-After = seconds to the period's end) when refused. The call's usage is recorded with
   * record(); if the response closes first, what it holds is released (or settled to what
   * `onClose` says was done: a cut stream).
   */
  async admit(res: Response, request: AdmitRequest): Promise<MeteredCall> {
    const key = res.locals.ctx.key;
    if (!key) throw new SwitchboardError('unauthorized');
    const call = await this.admitFor(key, request);
    // The client may have gone while the quota was checked: then nothing is started at all.
    if (res.closed) {
      await call.release();
      // Nobody reads this answer; it only stops the route before its worker is called.
      throw new SwitchboardError('unavailable', { message: 'The client went away before the work started.' });
    }
    res.on('close', () => call.closed());
    return call;
  }

  /** admit() for work that is not tied to one response (a job submission, a session's life). */
  async admitFor(key: KeyRecord, request: AdmitRequest): Promise<MeteredCall> {
    const quotas = quotasOfKey(this.deps.config.tiers, key);
    const id = request.id ?? `call:${randomUUID()}`;
    const reserve = onlyQuoted(request.reserve ?? {}, quotas);
    const check = (request.check ?? []).filter((meter) => quotas[meter] !== undefined);
    const holds = Object.keys(reserve).length > 0;
    const call = new MeteredCall(this, id, key.id, quotas, request.capability, request.model ?? null, holds);
    if (!holds && check.length === 0) {
      // Nothing to hold; but work the store could not record is not started either.
      if (!this.deps.usage.healthy) throw usageStoreUnavailable();
      return call;
    }
    let admission;
    try {
      admission = await this.deps.usage.admit({
        reservation_id: id,
        key_id: key.id,
        quotas,
        reserve,
        check,
        expires_at: new Date(Date.now() + request.deadlineMs + RESERVATION_MARGIN_MS),
      });
    } catch (error) {
      this.deps.logger.error({ err: error }, 'usage store unreachable: quota not checked');
      throw usageStoreUnavailable(error);
    }
    if (!admission.admitted) {
      this.deps.metrics.quotaRefusals.inc({ meter: admission.meter });
      if (admission.notice) publishQuotaNotice(this.deps.events, admission.notice);
      throw new SwitchboardError('quota_exceeded', {
        message: `The key's ${admission.meter} quota is spent for this period.`,
        param: admission.meter,
        retryAfterSeconds: admission.retry_after_seconds,
      });
    }
    return call;
  }

  /**
   * Stores one record (the store keeps the first of an id, so every replica may record the same
   * work) and settles the reservation of the same id. A failed write is retried in the background.
   */
  async record(record: UsageRecord, quotas: Quotas, reservationId?: string): Promise<void> {
    const pending = { record, quotas, reservationId };
    try {
      await this.write(pending);
    } catch (error) {
      this.retries.add(pending, error);
    }
  }

  /** record() for work found done in the background (jobs, sessions): the key is looked up. */
  async recordForKeyId(record: UsageRecord, reservationId?: string): Promise<void> {
    let quotas: Quotas = {};
    try {
      quotas = quotasOfKey(this.deps.config.tiers, await this.deps.keys.get(record.key_id));
    } catch {
      // A deleted key's usage still counts; only its 80 % warning has nothing to compare with.
    }
    await this.record(record, quotas, reservationId);
  }

  async release(reservationId: string): Promise<void> {
    try {
      await this.deps.usage.release(reservationId);
    } catch (error) {
      // The reservation stops counting at its expiry anyway.
      this.deps.logger.warn({ err: error, reservation_id: reservationId }, 'quota reservation not released');
    }
  }

  close(): void {
    this.retries.close();
  }

  private async write({ record, quotas, reservationId }: PendingRecord): Promise<void> {
    const settled = await this.deps.usage.record(record, quotas, reservationId);
    if (settled.recorded) {
      // Only the replica whose write stored it counts it: the metric adds up once cluster-wide.
      for (const [meter, value] of Object.entries(record.values)) {
        if (value) this.deps.metrics.usageRecorded.inc({ capability: record.capability, meter }, value);
      }
    }
    for (const notice of settled.notices) publishQuotaNotice(this.deps.events, notice);
  }
}

/** What a piece of work had done when its response closed early. */
export interface WorkSoFar {
  values: MeterValues;
  model?: string | null;
}

/** One admitted piece of work: recorded once when done, or released. */
export class MeteredCall {
  private settled = false;
  private measureOnClose: (() => WorkSoFar | undefined) | undefined;

  constructor(
    private readonly metering: Metering,
    readonly id: string,
    readonly keyId: string,
    readonly quotas: Quotas,
    readonly capability: Capability,
    private model: string | null,
    /** Whether the store holds a reservation for it (else there is nothing to release). */
    private readonly holds: boolean,
  ) {}

  /**
   * Records the work's usage. Await it before the response's last byte is written, so a gateway
   * killed after answering has the usage stored already.
   */
  async record(values: MeterValues, model?: string | null): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    if (model) this.model = model;
    await this.metering.record(
      {
        id: this.id,
        key_id: this.keyId,
        capability: this.capability,
        model: this.model,
        at: new Date(),
        values,
      },
      this.quotas,
      this.id,
    );
  }

  /** The work failed or was cancelled before doing anything: gives back what it held. */
  async release(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    if (this.holds) await this.metering.release(this.id);
  }

  /**
   * What the work did so far, should the response close before record(): a cut stream's tokens,
   * and the model that produced them (the one asked for may have been none: the default).
   */
  onClose(measure: () => WorkSoFar | undefined): void {
    this.measureOnClose = measure;
  }

  /** The response closed: whatever was not recorded is now, or released. */
  closed(): void {
    if (this.settled) return;
    const done = this.measureOnClose?.();
    void (done && hasWork(done.values) ? this.record(done.values, done.model) : this.release());
  }
}

const hasWork = (values: MeterValues) => Object.values(values).some((value) => (value ?? 0) > 0);

function onlyQuoted(values: MeterValues, quotas: Quotas): MeterValues {
  return Object.fromEntries(Object.entries(values).filter(([meter]) => quotas[meter as Meter] !== undefined));
}
