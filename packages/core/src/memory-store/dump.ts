import { memoryStoreStructures } from './memory-store.js';

/**
 * Every structure a memory store holds, as text (docs/storage.md, "Erasure (memory store)"): each
 * object walked whole, private fields included, maps and sets as their entries, typed arrays as hex.
 * For tests that prove something is stored nowhere (an erased address): slow, never on a request.
 */
export async function dumpMemoryStore(store: object): Promise<string> {
  const structures = memoryStoreStructures(store);
  if (structures === undefined) throw new TypeError('not a store made by createMemoryStore');
  return JSON.stringify(structures, (_key, value: unknown) => {
    if (value instanceof Map) return { map: [...value.entries()] };
    if (value instanceof Set) return { set: [...value] };
    // Without the trailing zero bytes: the unused capacity says nothing.
    if (ArrayBuffer.isView(value))
      return Buffer.from(value.buffer, value.byteOffset, value.byteLength)
        .toString('hex')
        .replace(/(00)+$/, '');
    if (value === Number.NEGATIVE_INFINITY || value === Number.POSITIVE_INFINITY) return String(value);
    return value;
  });
}
