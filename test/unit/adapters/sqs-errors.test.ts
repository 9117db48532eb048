import { QueueDoesNotExist, SQSServiceException } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { classifySqsError } from '../../../lambda/adapters/sqs-errors.js';
import { SendFailureKind } from '../../../lambda/core/enqueue-plan.js';

/** An SDK error as the client builds it from an SQS answer: its code as `name`, and who is at fault. */
const sdkError = (name: string, fault: 'client' | 'server') => new SQSServiceException({ name, $fault: fault, $metadata: { httpStatusCode: fault === 'client' ? 400 : 500 }, message: name });

describe('classifySqsError', () => {
  it.each([
    // Entries of a SendMessageBatch answer (BatchResultErrorEntry: Code, SenderFault).
    ['entry InvalidMessageContents (sender fault)', { source: 'entry', code: 'InvalidMessageContents', isSenderFault: true }, SendFailureKind.messageRefused],
    ['entry InvalidParameterValue (message too long)', { source: 'entry', code: 'InvalidParameterValue', isSenderFault: true }, SendFailureKind.messageRefused],
    ['entry AccessDenied', { source: 'entry', code: 'AccessDenied', isSenderFault: true }, SendFailureKind.configuration],
    ['entry KmsAccessDenied', { source: 'entry', code: 'KmsAccessDenied', isSenderFault: true }, SendFailureKind.configuration],
    ['entry throttled although a sender fault', { source: 'entry', code: 'RequestThrottled', isSenderFault: true }, SendFailureKind.transient],
    ['entry InternalError (SQS fault)', { source: 'entry', code: 'InternalError', isSenderFault: false }, SendFailureKind.transient],
    ['entry of an unknown code, sender fault', { source: 'entry', code: 'SomethingNew', isSenderFault: true }, SendFailureKind.messageRefused],
    ['entry of an unknown code, SQS fault', { source: 'entry', code: 'SomethingNew', isSenderFault: false }, SendFailureKind.transient],
    ['entry with no code and no fault flag', { source: 'entry', code: undefined, isSenderFault: undefined }, SendFailureKind.transient],
    // Calls that fail as a whole (thrown SDK errors, network errors).
    ['call QueueDoesNotExist', { source: 'call', error: new QueueDoesNotExist({ message: 'no queue', $metadata: {} }) }, SendFailureKind.configuration],
    ['call AccessDenied', { source: 'call', error: sdkError('AccessDenied', 'client') }, SendFailureKind.configuration],
    ['call AccessDeniedException', { source: 'call', error: sdkError('AccessDeniedException', 'client') }, SendFailureKind.configuration],
    ['call InvalidMessageContents', { source: 'call', error: sdkError('InvalidMessageContents', 'client') }, SendFailureKind.messageRefused],
    ['call ThrottlingException (a client fault that passes)', { source: 'call', error: sdkError('ThrottlingException', 'client') }, SendFailureKind.transient],
    ['call RequestThrottled', { source: 'call', error: sdkError('RequestThrottled', 'client') }, SendFailureKind.transient],
    ['call KmsThrottled', { source: 'call', error: sdkError('KmsThrottled', 'client') }, SendFailureKind.transient],
    ['call ExpiredToken', { source: 'call', error: sdkError('ExpiredToken', 'client') }, SendFailureKind.transient],
    ['call of an unknown client fault', { source: 'call', error: sdkError('SomethingNew', 'client') }, SendFailureKind.configuration],
    ['call of a server fault', { source: 'call', error: sdkError('ServiceUnavailable', 'server') }, SendFailureKind.transient],
    ['call of an unknown server fault', { source: 'call', error: sdkError('SomethingNew', 'server') }, SendFailureKind.transient],
    ['a network error', { source: 'call', error: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) }, SendFailureKind.transient],
    ['a timeout', { source: 'call', error: Object.assign(new Error('timed out'), { name: 'TimeoutError' }) }, SendFailureKind.transient],
    ['something thrown that is no error', { source: 'call', error: 'boom' }, SendFailureKind.transient],
  ] as const)('decides %s', (_label, report, kind) => {
    expect(classifySqsError(report).kind).toBe(kind);
  });

  it('keeps SQS’s code, for logs and the sender’s details', () => {
    expect(classifySqsError({ source: 'entry', code: 'InvalidMessageContents', isSenderFault: true })).toEqual({ kind: SendFailureKind.messageRefused, code: 'InvalidMessageContents' });
    expect(classifySqsError({ source: 'call', error: 'boom' })).toEqual({ kind: SendFailureKind.transient, code: 'NoAnswer' });
  });
});
