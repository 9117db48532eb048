/**
 * A Lambda SQS record carrying a queued event, as the event source mapping hands it to the
 * consumer: for handler unit tests that build their batches by hand.
 */
import type { SQSRecord } from 'aws-lambda';
import { encodeQueuedMessage, type QueuedEvent } from '../../lambda/core/event.js';

/** SQS's SequenceNumber of each event's message: fixed per message, growing as messages are sent, as SQS gives them. */
const sequenceNumbers = new Map<string, string>();
function sequenceNumberOf(eventId: string): string {
  const known = sequenceNumbers.get(eventId) ?? String(sequenceNumbers.size + 1).padStart(20, '0');
  sequenceNumbers.set(eventId, known);
  return known;
}

export function sqsRecordOf(queued: QueuedEvent, messageId: string = queued.event.event_id): SQSRecord {
  return {
    messageId,
    receiptHandle: `rh-${queued.event.event_id}`,
    body: JSON.stringify(queued),
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: '0',
      SenderId: 's',
      ApproximateFirstReceiveTimestamp: '0',
      MessageGroupId: queued.message_group_id,
      MessageDeduplicationId: queued.event.event_id,
      SequenceNumber: sequenceNumberOf(queued.event.event_id),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:delivery.fifo',
    awsRegion: 'us-east-1',
  };
}

/** A Lambda SQS record of a pack (several events of one key in one message, see `encodeQueuedMessage`). */
export function sqsPackRecordOf(events: readonly [QueuedEvent, ...QueuedEvent[]], messageId: string): SQSRecord {
  const [first] = events;
  return {
    ...sqsRecordOf(first, messageId),
    receiptHandle: `rh-${messageId}`,
    body: encodeQueuedMessage(events),
    attributes: { ...sqsRecordOf(first, messageId).attributes, MessageDeduplicationId: messageId, SequenceNumber: sequenceNumberOf(messageId) },
  };
}
