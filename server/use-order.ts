/**
 * A Map kept in the order its entries were last used, least recent first: what a bounded cache
 * drops first. The kept answers of the catalog, the kept pages and setups, and the verified
 * tokens each bound one (issue 29).
 */
export class UseOrderedMap<K, V> {
  private readonly entries = new Map<K, V>();
  /**
   * The key used last, already at the end. Using it again moves nothing: a delete and a set on
   * every hit of a Map of one entry (one catalog answer, one user's token) made V8 shrink and grow
   * it on every request.
   */
  private newest: K | undefined;

  get size(): number {
    return this.entries.size;
  }

  /** The value kept for `key`, which becomes the most recently used. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined && key !== this.newest) {
      this.entries.delete(key);
      this.entries.set(key, value);
      this.newest = key;
    }
    return value;
  }

  /** Keeps `value` for `key` as the most recently used. */
  set(key: K, value: V): void {
    // A key already there keeps its place in a Map when set again: it goes first.
    if (key !== this.newest) this.entries.delete(key);
    this.entries.set(key, value);
    this.newest = key;
  }

  /** `set`, then the least recently used entry dropped while more than `max` are kept: a cache bounded by count. */
  setWithin(key: K, value: V, max: number): void {
    this.set(key, value);
    while (this.entries.size > max) this.delete(this.entries.keys().next().value!);
  }

  delete(key: K): void {
    this.entries.delete(key);
    if (key === this.newest) this.newest = undefined;
  }

  clear(): void {
    this.entries.clear();
    this.newest = undefined;
  }

  /** The entries, least recently used first; deleting the one at hand while going through them is safe. */
  leastRecentFirst(): MapIterator<[K, V]> {
    return this.entries.entries();
  }
}
