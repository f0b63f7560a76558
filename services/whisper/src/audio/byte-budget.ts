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
