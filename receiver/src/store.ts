/**
 * Where a receiver keeps what it took: the webhook ids it processed (to drop a request sent again)
 * and, per ordering key, the last number taken and the numbers it is missing (`KeyState`).
 *
 * Writes of a key are compare-and-set on a version, so that two requests of one key at once (a
 * retry racing a slow first attempt) never lose each other's update: `createReceiver` reads the
 * key, judges the event, and writes back only if nobody wrote in between, or reads again. Any
 * shared store works:
 *
 * - **Redis**: a hash per key (`last`, `missing` as JSON, `version`), written by a Lua script that
 *   compares `version` (or `WATCH`/`MULTI`/`EXEC`); `remember` as `SET webhook:<id> 1 NX EX <ttl>`.
 * - **A SQL database**: a table `(key PRIMARY KEY, last, missing, version)`, written with
 *   `UPDATE … SET …, version = version + 1 WHERE key = ? AND version = ?` (an `INSERT` that fails
 *   on the primary key for a new key), and a table of webhook ids with their time, pruned.
 * - **DynamoDB**: an item per key, `PutItem` with `ConditionExpression` on `version`.
 */
import type { KeyState } from './order.js';

/** A key's state as the store holds it, with the version a write must name. */
export interface StoredKey {
  readonly state: KeyState;
  readonly version: number;
}

export interface ReceiverStore {
  /** The key's state and version; undefined for a key never written. */
  readonly readKey: (orderingKey: string) => Promise<StoredKey | undefined>;
  /**
   * Writes the key's state if its version is still `version` (undefined: only if the key was never
   * written), as version `version + 1` (or 1). False, writing nothing, when another write came first.
   */
  readonly writeKey: (orderingKey: string, state: KeyState, version: number | undefined) => Promise<boolean>;
  /** Whether a request with this `webhook-id` was processed (within the store's retention). */
  readonly hasSeen: (webhookId: string) => Promise<boolean>;
  /**
   * Records that the request with this `webhook-id` was processed. Keep ids at least as long as
   * the service may send one again: its retries span `RETRY_MAX_SECONDS` × `MAX_DELIVERY_ATTEMPTS`
   * (75 minutes with the defaults); a day is plenty.
   */
  readonly remember: (webhookId: string) => Promise<void>;
}

/**
 * A store in this process's memory: for tests, a single-process receiver, or to try the kit. Its
 * webhook ids are kept for `retentionMs` (a day by default) and at most `maxWebhookIds` of them.
 */
export function createMemoryStore(options: { readonly retentionMs?: number; readonly maxWebhookIds?: number; readonly now?: () => number } = {}): ReceiverStore & {
  /** Every key's state, for a look. */
  readonly keys: () => ReadonlyMap<string, KeyState>;
} {
  const retentionMs = options.retentionMs ?? 86_400_000;
  const maxWebhookIds = options.maxWebhookIds ?? 100_000;
  const now = options.now ?? Date.now;
  const keys = new Map<string, StoredKey>();
  // In insertion order, so the oldest go first.
  const seen = new Map<string, number>();
  const prune = (): void => {
    const oldest = now() - retentionMs;
    for (const [id, at] of seen) {
      if (at >= oldest && seen.size <= maxWebhookIds) break;
      seen.delete(id);
    }
  };
  return {
    readKey: async (orderingKey) => keys.get(orderingKey),
    writeKey: async (orderingKey, state, version) => {
      if (keys.get(orderingKey)?.version !== version) return false;
      keys.set(orderingKey, { state, version: (version ?? 0) + 1 });
      return true;
    },
    hasSeen: async (webhookId) => {
      prune();
      return seen.has(webhookId);
    },
    remember: async (webhookId) => {
      seen.delete(webhookId);
      seen.set(webhookId, now());
      prune();
    },
    keys: () => new Map([...keys].map(([key, stored]) => [key, stored.state])),
  };
}
