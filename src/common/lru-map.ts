// A map bounded by its entry count that forgets its least recently used entry
// first. Get, set, delete and eviction are O(1): a doubly linked list runs
// through the entries in order of use. It never scans its entries.
//
// Not a plain Map's insertion order with keys().next() for the oldest: V8
// leaves a deleted entry's slot in the table until the next rehash, and a
// fresh iterator walks every such slot, so evicting from the front of a full
// Map costs O(entries) — 155 us per insert into a full 100,000-entry read
// cache, measured, against well under 1 us here.
import assert from 'node:assert/strict';

interface Link<K, V> {
  key: K;
  value: V;
  /** Toward the least recently used end. */
  older: Link<K, V> | undefined;
  /** Toward the most recently used end. */
  newer: Link<K, V> | undefined;
}

export class LruMap<K, V> {
  private readonly links = new Map<K, Link<K, V>>();
  private oldestLink: Link<K, V> | undefined;
  private newestLink: Link<K, V> | undefined;
  /** Entries forgotten because the map was full (not those deleted). */
  evictedCount = 0;

  constructor(readonly entriesMax: number) {
    assert.ok(Number.isSafeInteger(entriesMax) && entriesMax >= 1, `entriesMax ${entriesMax} is not a positive count`);
  }

  /** The value, marking the entry as the most recently used. */
  get(key: K): V | undefined {
    const link = this.links.get(key);
    if (link === undefined) return undefined;
    this.moveToNewest(link);
    return link.value;
  }

  /** The value, leaving the order of use alone. */
  peek(key: K): V | undefined {
    return this.links.get(key)?.value;
  }

  has(key: K): boolean {
    return this.links.has(key);
  }

  /**
   * Stores the value as the most recently used entry. A new key in a full
   * map first evicts the least recently used entry, which is returned.
   */
  set(key: K, value: V): [K, V] | undefined {
    const existing = this.links.get(key);
    if (existing !== undefined) {
      existing.value = value;
      this.moveToNewest(existing);
      return undefined;
    }
    let evicted: [K, V] | undefined;
    if (this.links.size >= this.entriesMax) {
      const oldest = this.oldestLink!;
      this.unlink(oldest);
      this.evictedCount++;
      evicted = [oldest.key, oldest.value];
    }
    const link: Link<K, V> = { key, value, older: this.newestLink, newer: undefined };
    if (this.newestLink === undefined) this.oldestLink = link;
    else this.newestLink.newer = link;
    this.newestLink = link;
    this.links.set(key, link);
    return evicted;
  }

  delete(key: K): boolean {
    const link = this.links.get(key);
    if (link === undefined) return false;
    this.unlink(link);
    return true;
  }

  /** The least recently used entry: the next to be evicted. */
  oldest(): [K, V] | undefined {
    const link = this.oldestLink;
    return link === undefined ? undefined : [link.key, link.value];
  }

  /**
   * Entries from the least to the most recently used. Deleting the entry just
   * yielded is safe; any other change during the walk is not.
   */
  *entries(): IterableIterator<[K, V]> {
    for (let link = this.oldestLink; link !== undefined;) {
      const newer = link.newer;
      yield [link.key, link.value];
      link = newer;
    }
  }

  /** Keys from the least to the most recently used. */
  keys(): K[] {
    const keys: K[] = new Array(this.links.size);
    let index = 0;
    for (let link = this.oldestLink; link !== undefined; link = link.newer) keys[index++] = link.key;
    return keys;
  }

  clear(): void {
    this.links.clear();
    this.oldestLink = undefined;
    this.newestLink = undefined;
  }

  get size(): number {
    return this.links.size;
  }

  private moveToNewest(link: Link<K, V>): void {
    if (link === this.newestLink) return;
    // Out of its place (it has a newer neighbour: it is not the newest) ...
    if (link.older === undefined) this.oldestLink = link.newer;
    else link.older.newer = link.newer;
    link.newer!.older = link.older;
    // ... and onto the newest end.
    link.older = this.newestLink;
    link.newer = undefined;
    this.newestLink!.newer = link;
    this.newestLink = link;
  }

  private unlink(link: Link<K, V>): void {
    if (link.older === undefined) this.oldestLink = link.newer;
    else link.older.newer = link.newer;
    if (link.newer === undefined) this.newestLink = link.older;
    else link.newer.older = link.older;
    this.links.delete(link.key);
  }
}
