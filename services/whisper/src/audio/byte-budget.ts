// A byte budget shared by everything that writes into one place (the spool directory): a write
// takes its bytes first and is refused when they would not fit, so the place never holds more
// than `limit` bytes, however many uploads arrive at once.
export class ByteBudget {
  private taken = 0;

  constructor(
    readonly limit: number,
    /** Called with the bytes in use whenever they change (a gauge). */
    private readonly onChange: (used: number) => void = () => undefined,
  ) {}

  get used(): number {
    return this.taken;
  }

  /** Takes `bytes` if they fit and says whether they did. */
  tryTake(bytes: number): boolean {
    if (this.taken + bytes > this.limit) return false;
    this.taken += bytes;
    this.onChange(this.taken);
    return true;
  }

  give(bytes: number): void {
    this.taken = Math.max(0, this.taken - bytes);
    this.onChange(this.taken);
  }
}

/**
 * A byte limit per key (the caller's API key): what one key's uploads together may hold, so that
 * one key cannot take the whole spool from the others by opening many uploads and sending slowly.
 */
export class KeyedByteBudget {
  private readonly taken = new Map<string, number>();

  constructor(readonly limit: number) {}

  usedBy(key: string): number {
    return this.taken.get(key) ?? 0;
  }

  /** Takes `bytes` for `key` if they fit its limit and says whether they did. */
  tryTake(key: string, bytes: number): boolean {
    const used = this.usedBy(key);
    if (used + bytes > this.limit) return false;
    this.taken.set(key, used + bytes);
    return true;
  }

  give(key: string, bytes: number): void {
    const left = this.usedBy(key) - bytes;
    // Keys come and go with their uploads: an idle key keeps no entry.
    if (left > 0) this.taken.set(key, left);
    else this.taken.delete(key);
  }
}
