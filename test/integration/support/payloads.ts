/**
 * An in-memory payload store for the adapters' tests on dynalite: the bucket is not what is under
 * test there. `objects` shows what was stored.
 */
import type { PayloadStore } from '../../../lambda/core/dead-letter.js';

export function inMemoryPayloads(): PayloadStore & { readonly objects: Map<string, string> } {
  const objects = new Map<string, string>();
  return {
    objects,
    put: async (key, body) => {
      objects.set(key, body);
    },
    get: async (key) => {
      const body = objects.get(key);
      if (body === undefined) throw new Error(`no object ${key}`);
      return body;
    },
    remove: async (key) => {
      objects.delete(key);
    },
  };
}
