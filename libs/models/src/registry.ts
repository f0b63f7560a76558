// Load states of a capability's models: loading → ready | failed. Requests ask the registry for a
// ready handle and get the right error otherwise, so every worker answers alike.
import { SwitchboardError } from '@switchboard/errors';
import type { Logger } from '@switchboard/telemetry';
import type { ModelEntry, RepositoryScan } from './repository.js';

export type ModelStatus = 'loading' | 'ready' | 'failed';

export interface ModelState<H> {
  readonly entry: ModelEntry;
  readonly isDefault: boolean;
  status: ModelStatus;
  handle?: H;
  /** Seconds the load took, once it finished either way. */
  loadSeconds?: number;
}

export interface RegistryOptions<H> {
  readonly scan: RepositoryScan;
  readonly logger: Logger;
  /** Turns a model folder into a handle; throws when it cannot. */
  readonly load: (entry: ModelEntry) => Promise<H>;
  /** Called once per model when its load ends (metrics). */
  readonly onLoaded?: (entry: ModelEntry, status: 'ready' | 'failed', seconds: number) => void;
  /** Retry-After for requests that come while a model loads. */
  readonly loadingRetryAfterSeconds?: number;
  /** Test-only: wait this long before loading, so tests can watch the `loading` state. */
  readonly loadDelayMs?: number;
  /** Frees a handle at shutdown. */
  readonly dispose?: (handle: H) => Promise<void> | void;
  /** What /models says about a loaded model beyond its id and state (dtype, context, languages…). */
  readonly details?: (handle: H) => ModelDetails;
}

/** A loaded model's facts for /models (common/v1/models.proto); each worker fills what applies. */
export interface ModelDetails {
  /** The element type of the weights as loaded: "fp32", "fp16", "q8". */
  readonly dtype?: string;
  readonly contextLength?: number;
  readonly multilingual?: boolean;
  readonly languages?: readonly string[];
  readonly nativeWidth?: number;
  readonly nativeHeight?: number;
}

export interface ModelListing {
  readonly id: string;
  readonly status: ModelStatus;
  readonly isDefault: boolean;
  readonly description: string;
  readonly development: boolean;
  /** Known once the model is ready. */
  readonly details: ModelDetails;
}

/** One ModelInfo of common/v1/models.proto; shared with the animation worker's descriptions. */
export interface ModelInfoMessage {
  id: string;
  status: ModelStatus;
  is_default: boolean;
  description: string;
  development: boolean;
  dtype: string;
  context_length: number;
  multilingual: boolean;
  languages: string[];
  native_width: number;
  native_height: number;
}

export function modelInfoMessage(listing: ModelListing): ModelInfoMessage {
  const { details } = listing;
  return {
    id: listing.id,
    status: listing.status,
    is_default: listing.isDefault,
    description: listing.description,
    development: listing.development,
    dtype: details.dtype ?? '',
    context_length: details.contextLength ?? 0,
    multilingual: details.multilingual ?? false,
    languages: [...(details.languages ?? [])],
    native_width: details.nativeWidth ?? 0,
    native_height: details.nativeHeight ?? 0,
  };
}

export class ModelRegistry<H> {
  private readonly states = new Map<string, ModelState<H>>();
  private readonly defaultId: string | undefined;
  private defaultReady: Promise<H> | undefined;

  constructor(private readonly options: RegistryOptions<H>) {
    this.defaultId = options.scan.defaultId;
    for (const entry of options.scan.models) {
      this.states.set(entry.id, { entry, isDefault: entry.id === this.defaultId, status: 'loading' });
    }
  }

  /**
   * Loads every model, the default first (health waits on it), the others one after another so
   * they do not compete for memory and cores. Resolves with the default's handle; rejects when
   * there is no model or the default failed.
   */
  loadAll(): Promise<H> {
    this.defaultReady ??= this.loadInOrder();
    return this.defaultReady;
  }

  private async loadInOrder(): Promise<H> {
    const { defaultId } = this;
    if (defaultId === undefined) {
      throw new Error(`no model in ${this.options.scan.capabilityDir}`);
    }
    if (this.options.loadDelayMs) await new Promise((r) => setTimeout(r, this.options.loadDelayMs));
    const first = await this.loadOne(this.states.get(defaultId)!);
    void this.loadRest();
    if (first === undefined) throw new Error(`default model ${defaultId} failed to load`);
    return first;
  }

  private async loadRest(): Promise<void> {
    for (const state of this.states.values()) {
      if (state.status === 'loading') await this.loadOne(state);
    }
  }

  private async loadOne(state: ModelState<H>): Promise<H | undefined> {
    const { logger, load, onLoaded } = this.options;
    const started = performance.now();
    const log = logger.child({ model: state.entry.id });
    log.info({ dir: state.entry.dir, default: state.isDefault }, 'model loading');
    try {
      const handle = await load(state.entry);
      state.handle = handle;
      state.status = 'ready';
      state.loadSeconds = (performance.now() - started) / 1000;
      log.info(
        { seconds: state.loadSeconds, description: state.entry.description || undefined },
        'model ready',
      );
      onLoaded?.(state.entry, 'ready', state.loadSeconds);
      return handle;
    } catch (error) {
      state.status = 'failed';
      state.loadSeconds = (performance.now() - started) / 1000;
      log.error({ err: error, seconds: state.loadSeconds }, 'model failed to load');
      onLoaded?.(state.entry, 'failed', state.loadSeconds);
      return undefined;
    }
  }

  /** The id a request means: its own, or the default for an empty one. */
  resolveId(requested: string): string {
    return requested === '' ? (this.defaultId ?? '') : requested;
  }

  /**
   * A ready handle, or the error the caller should see: unknown_model (400, param model),
   * model_loading (503 with Retry-After), unavailable for a model that failed to load.
   */
  get(requested: string): { id: string; handle: H } {
    const id = this.resolveId(requested);
    const state = this.states.get(id);
    if (!state) throw new SwitchboardError('unknown_model', { param: 'model' });
    switch (state.status) {
      case 'ready':
        return { id, handle: state.handle! };
      case 'loading':
        throw new SwitchboardError('model_loading', {
          retryAfterSeconds: this.options.loadingRetryAfterSeconds ?? 5,
        });
      case 'failed':
        throw new SwitchboardError('unavailable', { message: 'The model failed to load.' });
    }
  }

  list(): ModelListing[] {
    return [...this.states.values()].map((s) => ({
      id: s.entry.id,
      status: s.status,
      isDefault: s.isDefault,
      description: s.entry.description,
      development: s.entry.development ?? false,
      details: s.handle !== undefined ? (this.options.details?.(s.handle) ?? {}) : {},
    }));
  }

  /** The ListModels answer every worker gives (common/v1/models.proto), from `list()`. */
  listModelsResponse(): { models: ModelInfoMessage[] } {
    return { models: this.list().map(modelInfoMessage) };
  }

  async dispose(): Promise<void> {
    for (const state of this.states.values()) {
      if (state.handle !== undefined) await this.options.dispose?.(state.handle);
    }
  }
}
