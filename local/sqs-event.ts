/**
 * The event Lambda's SQS event source mapping hands a function, built from a ReceiveMessage answer.
 */
import type { Message } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSMessageAttributes, SQSRecord, SQSRecordAttributes } from 'aws-lambda';

/** Where the records came from, as every record names it. */
export interface EventSource {
  readonly queueArn: string;
  readonly region: string;
}

function toRecordAttributes(attributes: Message['Attributes']): SQSRecordAttributes {
  const all: Record<string, string> = { ...attributes };
  return {
    ...all,
    ApproximateReceiveCount: all.ApproximateReceiveCount ?? '1',
    SentTimestamp: all.SentTimestamp ?? '',
    SenderId: all.SenderId ?? '',
    ApproximateFirstReceiveTimestamp: all.ApproximateFirstReceiveTimestamp ?? '',
  };
}

/** Lambda spells message attributes in camel case, binary values in base64, lists always present. */
function toMessageAttributes(attributes: Message['MessageAttributes']): SQSMessageAttributes {
  const converted: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    converted[name] = {
      dataType: value.DataType ?? 'String',
      ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
      ...(value.BinaryValue === undefined ? {} : { binaryValue: Buffer.from(value.BinaryValue).toString('base64') }),
      stringListValues: value.StringListValues ?? [],
      binaryListValues: (value.BinaryListValues ?? []).map((item) => Buffer.from(item).toString('base64')),
    };
  }
  return converted;
}

/** One SQS message as an SQS event record. */
export function toSqsRecord(message: Message, source: EventSource): SQSRecord {
  if (message.MessageId === undefined || message.ReceiptHandle === undefined) {
    throw new Error('ReceiveMessage returned a message without MessageId or ReceiptHandle');
  }
  return {
    messageId: message.MessageId,
    receiptHandle: message.ReceiptHandle,
    body: message.Body ?? '',
    attributes: toRecordAttributes(message.Attributes),
    messageAttributes: toMessageAttributes(message.MessageAttributes),
    md5OfBody: message.MD5OfBody ?? '',
    ...(message.MD5OfMessageAttributes === undefined ? {} : { md5OfMessageAttributes: message.MD5OfMessageAttributes }),
    eventSource: 'aws:sqs',
    eventSourceARN: source.queueArn,
    awsRegion: source.region,
  };
}

/** A batch, in the order SQS returned it (for FIFO queues: each group's messages in order). */
export function toSqsEvent(messages: readonly Message[], source: EventSource): SQSEvent {
  return { Records: messages.map((message) => toSqsRecord(message, source)) };
}
