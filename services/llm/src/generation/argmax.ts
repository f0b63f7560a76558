// Greedy decoding's choice, and the largest logit every sampled row is weighed against.

/**
 * The first id with the largest logit. Four lanes, each keeping its own first maximum, so the
 * comparisons do not wait on each other; the lanes' maxima then meet, ties going to the lower id.
 */
export function argmax(logits: ArrayLike<number>): number {
  const n = logits.length;
  let m0 = -Infinity;
  let m1 = -Infinity;
  let m2 = -Infinity;
  let m3 = -Infinity;
  let i0 = 0;
  let i1 = 0;
  let i2 = 0;
  let i3 = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    const a = logits[i]!;
    const b = logits[i + 1]!;
    const c = logits[i + 2]!;
    const d = logits[i + 3]!;
    if (a > m0) {
      m0 = a;
      i0 = i;
    }
    if (b > m1) {
      m1 = b;
      i1 = i + 1;
    }
    if (c > m2) {
      m2 = c;
      i2 = i + 2;
    }
    if (d > m3) {
      m3 = d;
      i3 = i + 3;
    }
  }
  for (; i < n; i++) {
    if (logits[i]! > m0) {
      m0 = logits[i]!;
      i0 = i;
    }
  }
  let id = i0;
  let value = m0;
  for (const [laneValue, laneId] of [
    [m1, i1],
    [m2, i2],
    [m3, i3],
  ] as const) {
    if (laneValue > value || (laneValue === value && laneValue > -Infinity && laneId < id)) {
      value = laneValue;
      id = laneId;
    }
  }
  return value > -Infinity ? id : 0;
}
