const encoder = new TextEncoder();

/**
 * `value` cut to at most `maxBytes` of UTF-8 on a character boundary (a surrogate pair is never
 * split), and whether anything was cut.
 */
export function capUtf8(value: string, maxBytes: number): { value: string; cut: boolean } {
  // No string of n UTF-16 units takes more than 3n bytes of UTF-8.
  if (value.length * 3 <= maxBytes) return { value, cut: false };
  const { read } = encoder.encodeInto(value, new Uint8Array(maxBytes));
  return read >= value.length ? { value, cut: false } : { value: value.slice(0, read), cut: true };
}
