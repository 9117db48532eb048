/**
 * Whether an SQS refusal is worth a retry: the one place that decides it, for a call that failed
 * as a whole (a thrown SDK error) and for one entry of a batch (`BatchResultErrorEntry`).
 */
import { SendFailureKind, type SendFailure } from '../core/enqueue-plan.js';

/**
 * Codes that pass: throttling (a 4xx with `SenderFault`, and yet a retry later succeeds), an
 * internal error or unavailability of SQS, and expired credentials (Lambda's are renewed).
 */
const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  'ThrottlingException',
  'Throttling',
  'RequestThrottled',
  'KmsThrottled',
  'KMS.ThrottlingException',
  'ServiceUnavailable',
  'InternalError',
  'InternalFailure',
  'InternalServerError',
  'RequestTimeout',
  'ExpiredToken',
  'ExpiredTokenException',
]);

/** Codes that refuse a message for what it holds, on every retry: the sender's to fix. */
const MESSAGE_CODES: ReadonlySet<string> = new Set(['InvalidMessageContents', 'InvalidParameterValue', 'MissingParameter']);

/**
 * Codes that refuse us whatever the message: the queue's name, our role's grants, its KMS key.
 * An operator must change the configuration; no retry of the producer's helps.
 */
const CONFIGURATION_CODES: ReadonlySet<string> = new Set([
  'AccessDenied',
  'AccessDeniedException',
  'QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue',
  'InvalidAddress',
  'InvalidSecurity',
  'UnsupportedOperation',
  'KmsAccessDenied',
  'KmsDisabled',
  'KmsInvalidKeyUsage',
  'KmsInvalidState',
  'KmsNotFound',
  'KmsOptInRequired',
  'KMS.AccessDeniedException',
  'KMS.DisabledException',
  'KMS.NotFoundException',
  'KMS.KMSInvalidStateException',
]);

/** What SQS said about one failure: a thrown error's `name` and `$fault`, or a batch entry's `Code` and `SenderFault`. */
export type SqsErrorReport =
  | { readonly source: 'call'; readonly error: unknown }
  | { readonly source: 'entry'; readonly code: string | undefined; readonly isSenderFault: boolean | undefined };

function classifyCode(code: string): SendFailureKind | undefined {
  if (TRANSIENT_CODES.has(code)) return SendFailureKind.transient;
  if (MESSAGE_CODES.has(code)) return SendFailureKind.messageRefused;
  if (CONFIGURATION_CODES.has(code)) return SendFailureKind.configuration;
  return undefined;
}

/** The `name` and `$fault` of an SDK error; nothing for a network error or anything else thrown. */
function readSdkError(error: unknown): { readonly name: string | undefined; readonly fault: unknown } {
  if (typeof error !== 'object' || error === null) return { name: undefined, fault: undefined };
  const name = 'name' in error && typeof error.name === 'string' ? error.name : undefined;
  return { name, fault: '$fault' in error ? error.$fault : undefined };
}

/**
 * Classifies an SQS refusal. Known codes decide first (a throttle is a sender fault that passes).
 * Otherwise a batch entry is permanent, the message's, when SQS says the sender caused it
 * (`SenderFault`), transient when SQS caused it; a call is permanent, our configuration, when SQS
 * answered it with a client fault (the call as we make it is refused, whatever the events), and
 * transient otherwise (a server fault, a network error, no answer at all).
 */
export function classifySqsError(report: SqsErrorReport): SendFailure {
  if (report.source === 'entry') {
    const code = report.code ?? 'Unknown';
    const kind = classifyCode(code) ?? (report.isSenderFault === true ? SendFailureKind.messageRefused : SendFailureKind.transient);
    return { kind, code };
  }
  const { name, fault } = readSdkError(report.error);
  const code = name ?? 'NoAnswer';
  const kind = classifyCode(code) ?? (fault === 'client' ? SendFailureKind.configuration : SendFailureKind.transient);
  return { kind, code };
}
