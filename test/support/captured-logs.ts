import type { Context } from 'aws-lambda';
import { vi } from 'vitest';
import * as z from 'zod';

/** One line as Powertools Logger wrote it, parsed. */
export type LogLine = Readonly<Record<string, unknown>>;

const logLineSchema = z.record(z.string(), z.unknown());

/** What the loggers wrote while `run` ran: the raw text, and each line parsed. */
export interface CapturedLogs<T> {
  readonly result: T;
  readonly text: string;
  readonly lines: readonly LogLine[];
}

/**
 * Runs `run` and captures what Powertools Logger writes meanwhile, where it writes it in Lambda:
 * stdout and stderr, one JSON document per line. The loggers under test are the project's own,
 * unchanged; only the streams are taken.
 */
export async function captureLogs<T>(run: () => Promise<T>): Promise<CapturedLogs<T>> {
  const chunks: string[] = [];
  const capture = (chunk: unknown): boolean => {
    chunks.push(String(chunk));
    return true;
  };
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  let result: T;
  try {
    result = await run();
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
  const text = chunks.join('');
  const lines = text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => logLineSchema.parse(JSON.parse(line)));
  return { result, text, lines };
}

/** The lines with this message. */
export function linesSaying(lines: readonly LogLine[], message: string): LogLine[] {
  return lines.filter((line) => line.message === message);
}

/** Lambda's context for one invocation, as the runtime passes it. */
export function lambdaContext(awsRequestId: string, remainingMs = 300_000): Context {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'ordered-webhooks-function',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:ordered-webhooks-function',
    memoryLimitInMB: '256',
    awsRequestId,
    logGroupName: '/aws/lambda/ordered-webhooks-function',
    logStreamName: '2026/12/03/[$LATEST]0123456789abcdef',
    getRemainingTimeInMillis: () => remainingMs,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
