/**
 * Each key's share of the cluster's browsers under contention.
 *
 * A tier's session limit says how many browsers a key may ever hold; it says nothing about a
 * cluster smaller than the sum of its keys' limits, where one enterprise key (50 by tier) can take
 * every browser and leave everyone else `503 no_capacity`. The rule here bites only then:
 *
 *   A key that already holds its fair share — max(1, ⌊share × capacity⌋), capacity being the
 *   sessions the live browser workers can run at once — may take another session only while no
 *   other key is waiting, i.e. none has been turned away with `no_capacity` while below its own
 *   fair share within the refusal window (and not served since).
 *
 * So with nobody waiting, a key grows up to its tier's limit and idle browsers stay usable; once
 * someone is turned away, keys at their share stop growing and browsers freed from then on go to
 * the keys below it. Sessions already held are never taken back. The share is of the capacity
 * live now, so it grows as the browser workers scale out. Keys above their share are not counted
 * as waiting when they are refused: they already hold their share, and two such keys would
 * otherwise hold free browsers back from each other.
 *
 * The refusal is `503 no_capacity` with Retry-After, not `429 session_limit`: the key's own limit
 * is not reached, the cluster is short, and the same call succeeds once the contention is over.
 */

/** What the rule looks at, all of it cluster-wide (the registry every replica watches). */
export interface ShareView {
  /** Sessions the live browser workers can run at once. */
  capacity: number;
  /** Active sessions of the calling key. */
  held: number;
  /** Other keys turned away for lack of capacity while below their share, still waiting. */
  waitingKeys: number;
}

/** The most browsers a key takes while others wait: at least one, whatever the share. */
export function fairShare(capacity: number, share: number): number {
  return Math.max(1, Math.floor(share * capacity + 1e-9));
}

/** Whether the key may take one more session now, under the share (its tier limit aside). */
export function shareAllows(view: ShareView, share: number): boolean {
  // No worker has announced itself: there is no capacity to share out yet.
  if (view.capacity === 0) return true;
  return view.held < fairShare(view.capacity, share) || view.waitingKeys === 0;
}

/** Whether a key refused for lack of capacity counts as waiting (it is below its share). */
export function countsAsWaiting(view: Omit<ShareView, 'waitingKeys'>, share: number): boolean {
  return view.capacity === 0 || view.held < fairShare(view.capacity, share);
}
