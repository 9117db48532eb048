/**
 * The consumer's side of packs (see `encodeQueuedMessage`): an SQS message that holds several
 * events of one key becomes one record per event, in order, and what the batch decided about those
 * records becomes what SQS is told about the message. Everything between works on events alone.
 */
import type { VisibilityChange } from './consumer-batch.js';
import type { ConsumerRecord } from './delivery.js';
import { encodeQueuedEvent, readQueuedMessage } from './event.js';

/**
 * One record per event, in the order of the batch: a message of one event, and one that cannot be
 * read (it is set aside whole, as received), stay as they are; a pack's items become records of
 * their own, `<message id>#<index>`, each with the message's group, receipt and receive count.
 */
export function unpackRecords(records: readonly ConsumerRecord[]): ConsumerRecord[] {
  return records.flatMap((record) => {
    if (record.problem !== undefined) return [record];
    const read = readQueuedMessage(record.body);
    if ('reason' in read || read.items.length === 1) return [record];
    return read.items.map((item, index) => ({
      ...record,
      messageId: `${record.messageId}#${index}`,
      // An item that is no event keeps its own text: it is set aside alone, as it came.
      body: 'queued' in item ? encodeQueuedEvent(item.queued) : item.text,
      pack: { messageId: record.messageId, index },
    }));
  });
}

/** The SQS message a record came in. */
export function messageIdOf(record: ConsumerRecord): string {
  return record.pack?.messageId ?? record.messageId;
}

/**
 * What SQS is told about the messages, from what the batch decided about their records. A message
 * is failed (kept) when any of its records is: its records that were settled come back with it and
 * are skipped as duplicates. Its visibility is that of its first record to wait: the records of a
 * group are planned in order, so that is the one the group waits on (its backoff), or a successor
 * of it (0).
 */
export function toMessageDecisions(
  plan: { readonly failedMessageIds: readonly string[]; readonly visibilityChanges: readonly VisibilityChange[] },
  records: readonly ConsumerRecord[],
): { readonly failedMessageIds: string[]; readonly visibilityChanges: VisibilityChange[] } {
  const messageIds = new Map(records.map((record) => [record.messageId, messageIdOf(record)]));
  const toMessage = (recordId: string): string => messageIds.get(recordId) ?? recordId;
  const failedMessageIds = [...new Set(plan.failedMessageIds.map(toMessage))];
  const visibilityChanges = new Map<string, VisibilityChange>();
  for (const change of plan.visibilityChanges) {
    const messageId = toMessage(change.messageId);
    if (!visibilityChanges.has(messageId)) visibilityChanges.set(messageId, { ...change, messageId });
  }
  return { failedMessageIds, visibilityChanges: [...visibilityChanges.values()] };
}
