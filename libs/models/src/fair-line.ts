// Waiting work served fairly between its owners (API keys) rather than first come, first served:
// each owner's requests wait in arrival order, and owners take turns — the next request taken is
// the oldest of the owner whose turn it is, and an owner served goes to the back of the rotation.
// One key with twenty requests waiting therefore delays another key's single request by at most
// one turn, not twenty.

interface OwnerLine<E> {
  readonly entries: E[];
}

export class FairLine<E> {
  /** Owners with waiting entries; Map order is the rotation (the first is next). */
  private readonly owners = new Map<string, OwnerLine<E>>();
  private count = 0;

  get length(): number {
    return this.count;
  }

  /** Entries `owner` has waiting. */
  countOf(owner: string): number {
    return this.owners.get(owner)?.entries.length ?? 0;
  }

  push(owner: string, entry: E): void {
    const line = this.owners.get(owner);
    if (line) line.entries.push(entry);
    else this.owners.set(owner, { entries: [entry] });
    this.count += 1;
  }

  /** Takes `entry` out wherever it waits (a caller that left); false when it was not waiting. */
  remove(owner: string, entry: E): boolean {
    const line = this.owners.get(owner);
    const at = line?.entries.indexOf(entry) ?? -1;
    if (!line || at < 0) return false;
    line.entries.splice(at, 1);
    if (line.entries.length === 0) this.owners.delete(owner);
    this.count -= 1;
    return true;
  }

  /** The entry that would be taken next, left in place. */
  peek(): E | undefined {
    for (const line of this.owners.values()) return line.entries[0];
    return undefined;
  }

  /** Takes the next owner's oldest entry; that owner goes to the back of the rotation. */
  shift(): E | undefined {
    return this.take(1, () => true)[0];
  }

  /**
   * Takes up to `most` entries that `matches` accepts, in turns: each pass over the rotation takes
   * at most one entry (the oldest that matches) from each owner, so a batch formed this way is
   * shared out between owners as well.
   */
  take(most: number, matches: (entry: E) => boolean): E[] {
    const taken: E[] = [];
    let tookInPass = true;
    while (taken.length < most && tookInPass) {
      tookInPass = false;
      for (const [owner, line] of [...this.owners]) {
        if (taken.length >= most) break;
        const at = line.entries.findIndex(matches);
        if (at < 0) continue;
        taken.push(...line.entries.splice(at, 1));
        this.count -= 1;
        tookInPass = true;
        // Served: to the back of the rotation (or out, with nothing left waiting).
        this.owners.delete(owner);
        if (line.entries.length > 0) this.owners.set(owner, line);
      }
    }
    return taken;
  }

  /**
   * Makes room for `owner` in a full line by taking out the newest entry of the owner with the
   * most waiting, when that owner would still have at least as many waiting as `owner` has with
   * its new entry; undefined (the newcomer must be refused) otherwise. Without it, one key that
   * filled the line first would keep every other key out of it.
   */
  evictFor(owner: string): E | undefined {
    let heaviest: [string, OwnerLine<E>] | undefined;
    for (const candidate of this.owners) {
      if (!heaviest || candidate[1].entries.length > heaviest[1].entries.length) heaviest = candidate;
    }
    if (!heaviest || heaviest[0] === owner) return undefined;
    const [heavyOwner, line] = heaviest;
    if (line.entries.length < this.countOf(owner) + 2) return undefined;
    const evicted = line.entries.pop()!;
    if (line.entries.length === 0) this.owners.delete(heavyOwner);
    this.count -= 1;
    return evicted;
  }

  /** Takes out every entry `matches` accepts, leaving the rotation as it was; how many went. */
  removeWhere(matches: (entry: E) => boolean): number {
    let removed = 0;
    for (const [owner, line] of this.owners) {
      const kept = line.entries.filter((entry) => !matches(entry));
      removed += line.entries.length - kept.length;
      if (kept.length === 0) this.owners.delete(owner);
      else line.entries.splice(0, line.entries.length, ...kept);
    }
    this.count -= removed;
    return removed;
  }

  /** Takes every entry out (a fault that fails them all), oldest owners first. */
  drain(): E[] {
    const all = [...this.owners.values()].flatMap((line) => line.entries);
    this.owners.clear();
    this.count = 0;
    return all;
  }
}
