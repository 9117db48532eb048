/**
 * The setup most integration files share: a test stack, with or without a recording receiver,
 * started once for the enclosing `describe` and stopped after it.
 */
import { afterAll, beforeAll } from 'vitest';
import { startRecordingReceiver, type RecordingReceiver, type Respond } from './receiver.js';
import { startTestStack, type TestStack, type TestStackOptions } from './stack.js';

export interface StackAndReceiverOptions extends TestStackOptions {
  /** The receiver's script; every attempt gets 204 without it. */
  readonly respond?: Respond;
}

/** Getters of what the hooks started. */
export interface StackAndReceiver {
  readonly stack: () => TestStack;
  readonly receiver: () => RecordingReceiver;
}

/**
 * Starts the receiver, then the stack, in `beforeAll`; stops the stack, then the receiver, in
 * `afterAll`, so that no delivery is left pointing at a receiver that is gone. An `afterAll` the
 * file registers after this call runs before it (vitest runs after-hooks as a stack).
 */
export function useStackAndReceiver(environment: Readonly<Record<string, string>> = {}, options: StackAndReceiverOptions = {}): StackAndReceiver {
  const { respond, ...stackOptions } = options;
  let stack: TestStack | undefined;
  let receiver: RecordingReceiver | undefined;
  beforeAll(async () => {
    receiver = await startRecordingReceiver(respond);
    stack = await startTestStack(environment, stackOptions);
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver?.stop();
  });
  return { stack: () => started('test stack', stack), receiver: () => started('receiver', receiver) };
}

/** A test stack without a receiver, started in `beforeAll` and stopped in `afterAll`. */
export function useTestStack(environment: Readonly<Record<string, string>> = {}, options: TestStackOptions = {}): () => TestStack {
  let stack: TestStack | undefined;
  beforeAll(async () => {
    stack = await startTestStack(environment, options);
  });
  afterAll(async () => {
    await stack?.stop();
  });
  return () => started('test stack', stack);
}

function started<T>(what: string, value: T | undefined): T {
  if (value === undefined) throw new Error(`The ${what} runs only between the beforeAll and afterAll of its describe.`);
  return value;
}
