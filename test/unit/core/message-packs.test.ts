import { describe, expect, it } from 'vitest';
import type { ConsumerRecord } from '../../../lambda/core/delivery.js';
import { encodeQueuedEvent, encodeQueuedMessage, type QueuedEvent } from '../../../lambda/core/event.js';
import { messageIdOf, toMessageDecisions, unpackRecords } from '../../../lambda/core/message-packs.js';

const queued = (eventId: string): QueuedEvent => ({
  version: 1,
  event: { event_id: eventId, tenant_id: 't', subscription_id: 's', type: 'x.y', payload_json: JSON.stringify({ n: eventId }) },
  ordering_key: 's',
  message_group_id: 'g',
  accepted_at: '2026-12-03T12:00:00.000Z',
});

const record = (messageId: string, body: string, extra: Partial<ConsumerRecord> = {}): ConsumerRecord => ({
  messageId,
  receiptHandle: `rh-${messageId}`,
  body,
  messageGroupId: 'g',
  receiveCount: 3,
  sequenceNumber: '7',
  ...extra,
});

describe('unpackRecords', () => {
  it('gives each event of a pack a record of its own, in order, with its message’s group, receipt, count and number', () => {
    const records = unpackRecords([record('m1', encodeQueuedMessage([queued('e1'), queued('e2')])), record('m2', encodeQueuedEvent(queued('e3')))]);
    expect(records).toEqual([
      record('m1#0', encodeQueuedEvent(queued('e1')), { receiptHandle: 'rh-m1', pack: { messageId: 'm1', index: 0 } }),
      record('m1#1', encodeQueuedEvent(queued('e2')), { receiptHandle: 'rh-m1', pack: { messageId: 'm1', index: 1 } }),
      record('m2', encodeQueuedEvent(queued('e3'))),
    ]);
    expect(records.map(messageIdOf)).toEqual(['m1', 'm1', 'm2']);
  });

  it('leaves a record it cannot read, or one SQS gave without its attributes, as it is', () => {
    const unreadable = record('m1', 'not json');
    const problem = record('m2', encodeQueuedMessage([queued('e1'), queued('e2')]), { problem: 'attributes.MessageGroupId missing' });
    expect(unpackRecords([unreadable, problem])).toEqual([unreadable, problem]);
  });
});

describe('toMessageDecisions', () => {
  it('fails a message once when any of its events failed, with the visibility of its first waiting event', () => {
    const records = unpackRecords([record('m1', encodeQueuedMessage([queued('e1'), queued('e2'), queued('e3')])), record('m2', encodeQueuedEvent(queued('e4')))]);
    const decisions = toMessageDecisions(
      {
        failedMessageIds: ['m1#1', 'm1#2', 'm2'],
        visibilityChanges: [
          { messageId: 'm1#1', receiptHandle: 'rh-m1', timeoutSeconds: 30 },
          { messageId: 'm1#2', receiptHandle: 'rh-m1', timeoutSeconds: 0 },
          { messageId: 'm2', receiptHandle: 'rh-m2', timeoutSeconds: 0 },
        ],
      },
      records,
    );
    expect(decisions).toEqual({
      failedMessageIds: ['m1', 'm2'],
      visibilityChanges: [
        { messageId: 'm1', receiptHandle: 'rh-m1', timeoutSeconds: 30 },
        { messageId: 'm2', receiptHandle: 'rh-m2', timeoutSeconds: 0 },
      ],
    });
  });
});
