/**
 * The errors the SQS model answers with, built as the SDK builds them from a real SQS response:
 * the modelled exception classes of `@aws-sdk/client-sqs` where the API model has one, the
 * service's base exception with the query-compatible code as `name` otherwise (SQS's JSON
 * protocol sends `x-amzn-query-error: InvalidParameterValue;Sender`, and the SDK names the error
 * after that code). Code that catches `error.name === 'ReceiptHandleIsInvalid'` therefore sees in
 * the simulation exactly what it sees on AWS.
 *
 * Messages are AWS's own wording where it was recorded against real SQS (LocalStack's snapshot
 * tests, `tests/aws/services/sqs/test_sqs.snapshot.json`, marked `aws.validated`), cited per code.
 */
import {
  BatchEntryIdsNotDistinct,
  BatchRequestTooLong,
  EmptyBatchRequest,
  InvalidAttributeName,
  InvalidBatchEntryId,
  InvalidMessageContents,
  QueueDoesNotExist,
  ReceiptHandleIsInvalid,
  SQSServiceException,
  TooManyEntriesInBatchRequest,
} from '@aws-sdk/client-sqs';

/** The error codes the model uses: the SDK error `name`, and the `Code` of a failed batch entry. */
export const SqsErrorCode = {
  batchEntryIdsNotDistinct: 'BatchEntryIdsNotDistinct',
  batchRequestTooLong: 'BatchRequestTooLong',
  emptyBatchRequest: 'EmptyBatchRequest',
  invalidAttributeName: 'InvalidAttributeName',
  invalidBatchEntryId: 'InvalidBatchEntryId',
  invalidMessageContents: 'InvalidMessageContents',
  invalidParameterValue: 'InvalidParameterValue',
  missingParameter: 'MissingParameter',
  queueDoesNotExist: 'QueueDoesNotExist',
  receiptHandleIsInvalid: 'ReceiptHandleIsInvalid',
  tooManyEntriesInBatchRequest: 'TooManyEntriesInBatchRequest',
} as const;
export type SqsErrorCode = (typeof SqsErrorCode)[keyof typeof SqsErrorCode];

/** What went wrong, before it becomes a thrown SDK error or a `Failed` batch entry. */
export interface SqsProblem {
  readonly code: SqsErrorCode;
  readonly message: string;
}

/** A problem, for code that builds the `Failed` entries of a batch answer. */
export function problem(code: SqsErrorCode, message: string): SqsProblem {
  return { code, message };
}

// What a parsed 400 carries; the model makes no HTTP request.
const $metadata = { httpStatusCode: 400, attempts: 1, totalRetryDelay: 0 };

/** The SDK error a real SQS answer with this problem turns into. */
export function toSdkError(error: SqsProblem): SQSServiceException {
  const options = { $metadata, message: error.message };
  switch (error.code) {
    case SqsErrorCode.batchEntryIdsNotDistinct:
      return new BatchEntryIdsNotDistinct(options);
    case SqsErrorCode.batchRequestTooLong:
      return new BatchRequestTooLong(options);
    case SqsErrorCode.emptyBatchRequest:
      return new EmptyBatchRequest(options);
    case SqsErrorCode.invalidAttributeName:
      return new InvalidAttributeName(options);
    case SqsErrorCode.invalidBatchEntryId:
      return new InvalidBatchEntryId(options);
    case SqsErrorCode.invalidMessageContents:
      return new InvalidMessageContents(options);
    case SqsErrorCode.queueDoesNotExist:
      return new QueueDoesNotExist(options);
    case SqsErrorCode.receiptHandleIsInvalid:
      return new ReceiptHandleIsInvalid(options);
    case SqsErrorCode.tooManyEntriesInBatchRequest:
      return new TooManyEntriesInBatchRequest(options);
    case SqsErrorCode.invalidParameterValue:
    case SqsErrorCode.missingParameter:
      // Not modelled shapes: the SDK builds its base exception named after the query error code.
      return new SQSServiceException({ ...options, name: error.code, $fault: 'client' });
  }
}

/** Thrown where the model answers as SQS would: a client error with the SDK's `name`. */
export function fail(code: SqsErrorCode, message: string): never {
  throw toSdkError(problem(code, message));
}

/**
 * Misuse of the model itself (an operation it does not model, a queue set up wrongly): a fault of
 * the simulation, never something the code under test should see or handle.
 */
export class SqsModelError extends Error {
  override readonly name = 'SqsModelError';
}

/** AWS's wording for each rejection, in one place so tests can match it. */
export const SqsMessage = {
  // Validated: LocalStack test_non_existent_queue.
  queueDoesNotExist: 'The specified queue does not exist.',
  // Validated: LocalStack test_delete_message_with_illegal_receipt_handle.
  notAReceiptHandle: (handle: string) => `The input receipt handle "${handle}" is not a valid receipt handle.`,
  // aws/aws-sdk-java-v2#3101 (a BatchResultErrorEntry seen on AWS).
  handleOfAnotherQueue: (handle: string) => `The receipt handle "${handle}" is not valid for this queue.`,
  // Validated: LocalStack test_fifo_delete_after_visibility_timeout (FIFO only; AWS 2025-03-28).
  handleExpired: (handle: string) => `Value ${handle} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.`,
  // smaskalik/sqsmover#54: the entry AWS returns in DeleteMessageBatch for an expired FIFO handle.
  handleExpiredEntry: 'The receipt handle has expired',
  // LocalStack test_change_visibility_on_deleted_message_raises_invalid_parameter_value.
  notAvailableForVisibilityChange: (handle: string) =>
    `Value ${handle} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.`,
  // localstack/localstack#3956 and aws/aws-sdk-net#794, quoting AWS.
  visibilityBeyondLimit: (seconds: number) =>
    `Value ${seconds} for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds]`,
  visibilityOutOfRange: (seconds: unknown) => `Value ${String(seconds)} for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200, if provided.`,
  // Validated: LocalStack test_send_receive_max_number_of_messages.
  maxNumberOfMessages: (value: unknown) => `Value ${String(value)} for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.`,
  // Validated: LocalStack test_send_receive_wait_time_seconds.
  waitTimeSeconds: (value: unknown) => `Value ${String(value)} for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.`,
  // Validated: LocalStack test_send_empty_message.
  missingBody: 'The request must contain the parameter MessageBody.',
  // Validated: LocalStack test_posting_to_fifo_requires_deduplicationid_group_id (MissingParameter on
  // SendMessage) and test_send_batch_missing_message_group_id_for_fifo_queue (InvalidParameterValue on a batch).
  missingGroupId: 'The request must contain the parameter MessageGroupId.',
  // Validated: same tests.
  missingDeduplicationId: 'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly',
  // Validated: LocalStack test_send_message_to_standard_queue_with_invalid_message_group_id / test_message_deduplication_id_invalid.
  badFifoId: (parameter: 'MessageGroupId' | 'MessageDeduplicationId', value: string) =>
    `Value ${value} for parameter ${parameter} is invalid. Reason: ${parameter} can only include alphanumeric and punctuation characters. 1 to 128 in length.`,
  // Validated: LocalStack test_fifo_queue_send_message_with_delay_seconds_fails.
  delayOnFifo: (seconds: number) => `Value ${seconds} for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.`,
  // Validated: LocalStack test_send_oversized_message (SendMessage) and test_send_batch_message_size (a batch entry).
  tooLarge: (maxBytes: number) => `One or more parameters are invalid. Reason: Message must be shorter than ${maxBytes} bytes.`,
  tooLargeEntry: (maxBytes: number) => `One or more parameters cannot be validated. Reason: Message must be shorter than ${maxBytes} bytes.`,
  invalidCharacters: 'Invalid characters found in the message body; only #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF are allowed.',
  // Validated: LocalStack test_too_many_entries_in_batch_request.
  tooManyEntries: (count: number) => `Maximum number of entries per request are 10. You have sent ${count}.`,
  // Validated: LocalStack test_invalid_batch_id.
  invalidBatchEntryId: 'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.',
  entryIdsNotDistinct: (id: string) => `Id ${id} repeated.`,
  emptyBatch: (entryType: string) => `There should be at least one ${entryType} in the request.`,
  // Validated: LocalStack test_send_message_batch_with_oversized_contents.
  batchTooLong: (maxBytes: number, bytes: number) => `Batch requests cannot be longer than ${maxBytes} bytes. You have sent ${bytes} bytes.`,
  tooManyAttributes: (count: number) => `Number of message attributes [${count}] exceeds the allowed maximum [10].`,
  // Validated: LocalStack test_send_message_with_empty_string_attribute.
  emptyAttribute: (name: string, dataType: string) => `Message (user) attribute '${name}' must contain a non-empty value of type '${dataType}'.`,
  unknownAttribute: (name: string) => `Unknown Attribute ${name}.`,
} as const;
