/**
 * A map that forgets its least recently used entries beyond `max`, for values that never change once stored
 * (a used template version, a registered schema version): an entry never goes stale, the bound only limits
 * memory.
 */
export interface BoundedCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
}

export function createBoundedCache<V>(max: number): BoundedCache<V> {
  const entries = new Map<string, V>();
  return {
    get(key) {
      const hit = entries.get(key);
      if (hit === undefined) return undefined;
      entries.delete(key);
      entries.set(key, hit);
      return hit;
    },
    set(key, value) {
      entries.delete(key);
      entries.set(key, value);
      if (entries.size > max) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
    },
  };
}
