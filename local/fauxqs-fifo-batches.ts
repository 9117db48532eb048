/**
 * Makes fauxqs's FIFO queues hand out and take back messages as SQS does, so that the local stack
 * sees batches holding several messages of one group, the case the consumer's successor rules and
 * the dead-letter redrive are written for.
 *
 * SQS (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-understanding-logic.html,
 * "Receiving messages"): a receive returns as many messages of one message group as it can, in
 * order, up to MaxNumberOfMessages (at most 10); when that group has fewer, the batch may be
 * filled from other groups, each in its order; and no later receive gets any message of a group
 * until every message of it in flight is deleted or visible again.
 *
 * fauxqs 2.4.1 differs in four places, each replaced here on its classes' prototypes:
 * - `SqsQueue.dequeueFifo` stops after a group's first message;
 * - `SqsQueue.changeVisibility` to 0 and the expiry in `SqsQueue.processTimers` put a message back
 *   at the front of its group (`unshift`), so several returning messages of one group come back
 *   reversed;
 * - with a data directory, `changeVisibility` to 0 writes NULL into the NOT NULL receive count
 *   column: SQLite throws after the message has left the in-flight set, so the message is lost
 *   from memory, its group stays locked for the rest of the run, and on disk it stays in flight
 *   until its old visibility deadline (minutes, for the delivery queue);
 * - `PersistenceManager.loadSqsMessages` reads a queue's messages without ORDER BY.
 * A fifth difference costs the local stack its throughput rather than its order:
 * - `SqsQueue.notifyWaiters` ends every waiting long poll at once, so that one arriving batch ends
 *   all the pollers' receives but one with nothing (SQS ends a long poll early only with messages).
 *   With the event source mapping's CONSUMER_CONCURRENCY pollers on one event loop, each empty
 *   receive is a round trip through the SDK and fauxqs, and a new receive after it: at 16 pollers,
 *   half a receive per delivered event, every one empty. On a FIFO queue the override wakes one
 *   waiter; a receive that leaves messages receivable wakes the next (see dequeueFifoInBatches).
 * A sixth lets a hold pass SQS's limit: fauxqs checks each ChangeMessageVisibility against 0 to
 * 43,200 s but keeps no total, where SQS counts the 12 hours from the receive and refuses a longer
 * total with `InvalidParameterValue` (per entry in a batch). The override records when each
 * message was received and refuses as SQS does (see refuseBeyondTwelveHours); a message put in
 * flight by fauxqs's own loader after a restart has no receive time and is not checked.
 * Everything else is kept as fauxqs does it: the receive count and the maxReceiveCount move to the
 * dead-letter queue per message, and a group's lock counted per message in flight (taken by each
 * message handed out; released by each delete, return to visible or expiry; restored per message
 * in flight by a load). One addition: a message moved to the dead-letter queue takes that queue's
 * next sequence number (see moveToDeadLetterQueue).
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as z from 'zod';

/** The fauxqs release whose internals this override was written against and checked on. */
export const FAUXQS_PATCHED_VERSION = '2.4.1';

/** The installed fauxqs is not the one the override knows, so the local stack would not behave as SQS. */
export class FauxqsPatchError extends Error {
  override readonly name = 'FauxqsPatchError';
}

/** SQS hands out at most 10 messages per receive. */
const MAX_MESSAGES_PER_RECEIVE = 10;

/** fauxqs's group for a FIFO message without one (its `DEFAULT_FIFO_GROUP_ID`). */
const DEFAULT_GROUP_ID = '__default';

/**
 * Marks fauxqs's prototypes as patched. A symbol in the global registry, because fauxqs is loaded
 * once per process while this module may be evaluated once per test file.
 */
const INSTALLED = Symbol.for('ordered-webhooks.fauxqs-fifo-batches');

/** The fields of a fauxqs message the override reads or writes. */
interface FauxqsMessage {
  readonly messageId: string;
  readonly body: string;
  readonly md5OfBody: string;
  readonly md5OfMessageAttributes?: string;
  readonly messageAttributes: Readonly<Record<string, unknown>>;
  approximateReceiveCount: number;
  approximateFirstReceiveTimestamp?: number;
  readonly delayUntil?: number;
  readonly messageGroupId?: string;
  /** Zero-padded to 20 digits, so that string order is number order. */
  sequenceNumber?: string;
}

/** A long poll waiting in fauxqs's `SqsQueue.waitForMessages`. */
interface PollWaiter {
  readonly resolve: () => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

interface InflightEntry {
  readonly message: FauxqsMessage;
  readonly receiptHandle: string;
  visibilityDeadline: number;
  /** When this receive handed the message out (ms), set by the override's receives. */
  readonly receivedAt?: number;
}

/** A message as fauxqs's ReceiveMessage action returns it. */
interface ReceivedMessage {
  MessageId: string;
  ReceiptHandle: string;
  MD5OfBody: string;
  Body: string;
  MD5OfMessageAttributes?: string;
  MessageAttributes?: Readonly<Record<string, unknown>>;
}

interface FauxqsPersistence {
  updateMessageInflight(
    messageId: string,
    receiptHandle: string | null,
    visibilityDeadline: number | null,
    receiveCount: number,
    firstReceiveTimestamp: number | undefined,
  ): void;
  deleteMessage(messageId: string): void;
}

/** The state and methods of fauxqs's `SqsQueue` the override uses. */
interface FauxqsQueue {
  readonly name: string;
  /** fauxqs fills in SQS's defaults, VisibilityTimeout among them, when it creates a queue. */
  readonly attributes: { readonly VisibilityTimeout: string; readonly RedrivePolicy?: string };
  readonly messages: FauxqsMessage[];
  readonly inflightMessages: Map<string, InflightEntry>;
  readonly fifoMessages: Map<string, FauxqsMessage[]>;
  readonly fifoDelayed: Map<string, FauxqsMessage[]>;
  readonly fifoLockedGroups: Map<string, number>;
  /** Set by fauxqs's constructor; checked when used, since it is not on the prototype. */
  readonly pollWaiters?: PollWaiter[];
  readonly persistence?: FauxqsPersistence;
  readonly spy?: { addMessage(record: Readonly<Record<string, unknown>>): void };
  isFifo(): boolean;
  processTimers(): void;
  enqueue(message: FauxqsMessage): void;
  nextSequenceNumber(): string;
  hasAvailableFifoMessages(): boolean;
  notifyWaiters(): void;
}

type DeadLetterQueueResolver = (arn: string) => FauxqsQueue | undefined;

/** What the override needs of each class, checked before anything is replaced. */
const REQUIRED_METHODS = {
  SqsRouter: ['register'],
  SqsQueue: ['dequeueFifo', 'changeVisibility', 'waitForMessages', 'processTimers', 'isFifo', 'enqueue', 'nextSequenceNumber', 'hasAvailableFifoMessages', 'notifyWaiters'],
  PersistenceManager: ['loadSqsMessages', 'updateMessageInflight', 'deleteMessage'],
} as const;

const packageJsonSchema = z.object({ name: z.literal('fauxqs'), version: z.string() });

const redrivePolicySchema = z.object({ deadLetterTargetArn: z.string().min(1), maxReceiveCount: z.coerce.number().positive() });

/** A method taken off a prototype, to be called with `Reflect.apply`. */
type Method = (...args: never[]) => unknown;

function isMethod(value: unknown): value is Method {
  return typeof value === 'function';
}

/** A class's prototype and its methods the override needs, or a {@link FauxqsPatchError}. */
function methodsOf<C extends keyof typeof REQUIRED_METHODS>(
  module: unknown,
  className: C,
): { readonly prototype: object; readonly original: (name: (typeof REQUIRED_METHODS)[C][number]) => Method } {
  const found: unknown = typeof module === 'object' && module !== null ? Reflect.get(module, className) : undefined;
  const prototype: unknown = typeof found === 'function' ? Reflect.get(found, 'prototype') : undefined;
  if (typeof prototype !== 'object' || prototype === null) {
    throw new FauxqsPatchError(`fauxqs no longer has the class ${className}; the FIFO batch override (local/fauxqs-fifo-batches.ts) must be rewritten`);
  }
  const missing = REQUIRED_METHODS[className].filter((name) => !isMethod(Reflect.get(prototype, name)));
  if (missing.length > 0) {
    throw new FauxqsPatchError(`fauxqs ${className} lacks ${missing.join(', ')}; the FIFO batch override (local/fauxqs-fifo-batches.ts) must be rewritten`);
  }
  return {
    prototype,
    original: (name) => {
      const method: unknown = Reflect.get(prototype, name);
      if (!isMethod(method)) throw new FauxqsPatchError(`fauxqs ${className}.${name} is gone`);
      return method;
    },
  };
}

/** Orders two messages of one group by the sequence number fauxqs gave them on send. */
function bySequence(a: FauxqsMessage, b: FauxqsMessage): number {
  const left = a.sequenceNumber ?? '';
  const right = b.sequenceNumber ?? '';
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * Puts a message back into its group at its place by sequence number. A message leaves its group
 * only from the front, so this is the place it had: before every later message, after any earlier
 * one that came back before it.
 */
function returnToGroup(groups: Map<string, FauxqsMessage[]>, groupId: string, message: FauxqsMessage): void {
  const group = groups.get(groupId) ?? [];
  const later = group.findIndex((queued) => bySequence(queued, message) > 0);
  if (later === -1) group.push(message);
  else group.splice(later, 0, message);
  groups.set(groupId, group);
}

/** One message of the group no longer in flight; the group unlocks when none is. */
function releaseGroupLock(queue: FauxqsQueue, groupId: string): void {
  const remaining = (queue.fifoLockedGroups.get(groupId) ?? 1) - 1;
  if (remaining <= 0) queue.fifoLockedGroups.delete(groupId);
  else queue.fifoLockedGroups.set(groupId, remaining);
}

/** The receive count is kept, as SQS keeps it; only the in-flight state is cleared. */
function persistVisible(queue: FauxqsQueue, message: FauxqsMessage): void {
  queue.persistence?.updateMessageInflight(message.messageId, null, null, message.approximateReceiveCount, message.approximateFirstReceiveTimestamp);
}

/**
 * Moves a message past its maxReceiveCount to the dead-letter queue, as fauxqs does, with one
 * change: it takes the next sequence number of that queue. fauxqs would keep the source queue's
 * number, which says nothing about its place among the dead-letter queue's own messages, while
 * this override returns messages and loads them from disk by sequence number.
 */
function moveToDeadLetterQueue(queue: FauxqsQueue, message: FauxqsMessage, deadLetterQueue: FauxqsQueue): void {
  queue.spy?.addMessage({
    service: 'sqs',
    queueName: queue.name,
    messageId: message.messageId,
    body: message.body,
    messageAttributes: message.messageAttributes,
    status: 'dlq',
    timestamp: Date.now(),
  });
  queue.persistence?.deleteMessage(message.messageId);
  if (deadLetterQueue.isFifo()) message.sequenceNumber = deadLetterQueue.nextSequenceNumber();
  deadLetterQueue.enqueue(message);
}

/** The queue's redrive policy; undefined when it has none or one fauxqs cannot read, which fauxqs ignores too. */
function readRedrivePolicy(text: string | undefined): z.infer<typeof redrivePolicySchema> | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const policy = redrivePolicySchema.safeParse(parsed);
  return policy.success ? policy.data : undefined;
}

/** Takes a message in flight and locks its group for one more message. */
function takeInFlight(queue: FauxqsQueue, groupId: string, message: FauxqsMessage, visibilityTimeoutSeconds: number): ReceivedMessage {
  const receiptHandle = randomUUID();
  const receivedAt = Date.now();
  const visibilityDeadline = receivedAt + visibilityTimeoutSeconds * 1000;
  queue.inflightMessages.set(receiptHandle, { message, receiptHandle, visibilityDeadline, receivedAt });
  queue.persistence?.updateMessageInflight(message.messageId, receiptHandle, visibilityDeadline, message.approximateReceiveCount, message.approximateFirstReceiveTimestamp);
  queue.fifoLockedGroups.set(groupId, (queue.fifoLockedGroups.get(groupId) ?? 0) + 1);
  const received: ReceivedMessage = { MessageId: message.messageId, ReceiptHandle: receiptHandle, MD5OfBody: message.md5OfBody, Body: message.body };
  if (message.md5OfMessageAttributes) received.MD5OfMessageAttributes = message.md5OfMessageAttributes;
  if (Object.keys(message.messageAttributes).length > 0) received.MessageAttributes = message.messageAttributes;
  return received;
}

/**
 * Replaces `SqsQueue.dequeueFifo`: from each unlocked group with visible messages, in fauxqs's
 * order of groups, as many messages as still fit, in order; a message past the redrive policy's
 * maxReceiveCount is moved to the dead-letter queue instead and does not take a place.
 */
function dequeueFifoInBatches(
  this: FauxqsQueue,
  maxCount: number,
  visibilityTimeoutOverride: number | undefined,
  resolveDeadLetterQueue: DeadLetterQueueResolver | undefined,
): ReceivedMessage[] {
  // The timers' own wake-up is held back: this receive takes what they make visible first, and
  // wakes the next waiter below if it leaves anything.
  wokenWaiterPending.add(this);
  this.processTimers();
  wokenWaiterPending.delete(this);
  const visibilityTimeoutSeconds = visibilityTimeoutOverride ?? Number.parseInt(this.attributes.VisibilityTimeout, 10);
  const redrive = readRedrivePolicy(this.attributes.RedrivePolicy);
  const count = Math.min(maxCount, MAX_MESSAGES_PER_RECEIVE);
  const received: ReceivedMessage[] = [];
  for (const [groupId, group] of this.fifoMessages) {
    if (received.length >= count) break;
    if (this.fifoLockedGroups.has(groupId)) continue;
    while (received.length < count) {
      const message = group.shift();
      if (message === undefined) break;
      message.approximateReceiveCount += 1;
      if (!message.approximateFirstReceiveTimestamp) message.approximateFirstReceiveTimestamp = Date.now();
      if (redrive !== undefined && message.approximateReceiveCount > redrive.maxReceiveCount) {
        const deadLetterQueue = resolveDeadLetterQueue?.(redrive.deadLetterTargetArn);
        if (deadLetterQueue !== undefined) {
          moveToDeadLetterQueue(this, message, deadLetterQueue);
          continue;
        }
      }
      received.push(takeInFlight(this, groupId, message, visibilityTimeoutSeconds));
    }
    if (group.length === 0) this.fifoMessages.delete(groupId);
  }
  // One waiter is woken per change (see wakeOneWaiter): if this receive left messages for another,
  // the next waiting long poll takes them now rather than at fauxqs's next 20 ms timer tick.
  if (received.length > 0 && this.hasAvailableFifoMessages()) this.notifyWaiters();
  return received;
}

/**
 * The queues with a long poll woken and not yet received: fauxqs's receive dequeues a microtask
 * after the wake, and a SendMessageBatch enqueues (and notifies) ten times before that.
 */
const wokenWaiterPending = new WeakSet<FauxqsQueue>();

/**
 * Replaces `SqsQueue.notifyWaiters` for FIFO queues: ends the longest-waiting long poll only, which
 * then receives; the others keep waiting, as on SQS, until a receive leaves messages for them.
 * While a woken poll has not received yet, a further notification wakes nobody: that receive
 * takes what is there, and wakes the next waiter if it leaves any.
 */
function wakeOneWaiter(queue: FauxqsQueue, notifyAll: Method): void {
  if (wokenWaiterPending.has(queue)) return;
  const waiters = queue.pollWaiters;
  if (!Array.isArray(waiters)) {
    // Not the fauxqs this was written for (the version check makes this unreachable): wake all, as it does.
    Reflect.apply(notifyAll, queue, []);
    return;
  }
  const waiter = waiters.shift();
  if (waiter === undefined) return;
  clearTimeout(waiter.timer);
  wokenWaiterPending.add(queue);
  waiter.resolve();
}

/**
 * Replaces `SqsQueue.processTimers` for FIFO queues: a message whose visibility timeout has passed
 * goes back to its place in its group, and so does a delayed message that is due.
 */
function processFifoTimers(queue: FauxqsQueue): void {
  const now = Date.now();
  for (const [receiptHandle, entry] of queue.inflightMessages) {
    if (entry.visibilityDeadline > now) continue;
    queue.inflightMessages.delete(receiptHandle);
    const groupId = entry.message.messageGroupId ?? DEFAULT_GROUP_ID;
    releaseGroupLock(queue, groupId);
    // Not written to disk, as fauxqs does not: a load treats a passed deadline as visible.
    returnToGroup(queue.fifoMessages, groupId, entry.message);
  }
  for (const [groupId, delayed] of queue.fifoDelayed) {
    const stillDelayed: FauxqsMessage[] = [];
    for (const message of delayed) {
      if (message.delayUntil !== undefined && message.delayUntil > now) stillDelayed.push(message);
      else returnToGroup(queue.fifoMessages, groupId, message);
    }
    if (stillDelayed.length === 0) queue.fifoDelayed.delete(groupId);
    else queue.fifoDelayed.set(groupId, stillDelayed);
  }
  if (queue.hasAvailableFifoMessages()) queue.notifyWaiters();
}

/**
 * Replaces `SqsQueue.changeVisibility` when the timeout is 0: the message becomes visible at its
 * place in its group, and on disk keeps its receive count. Other timeouts are fauxqs's.
 */
function makeVisible(queue: FauxqsQueue, entry: InflightEntry): void {
  queue.inflightMessages.delete(entry.receiptHandle);
  persistVisible(queue, entry.message);
  const groupId = entry.message.messageGroupId;
  if (queue.isFifo() && groupId !== undefined) {
    releaseGroupLock(queue, groupId);
    returnToGroup(queue.fifoMessages, groupId, entry.message);
    // A head made visible while its successors are in flight is not receivable yet: waking a long
    // poll then would end it early with nothing, which SQS does not do.
    if (queue.hasAvailableFifoMessages()) queue.notifyWaiters();
  } else {
    queue.messages.push(entry.message);
    queue.notifyWaiters();
  }
}

/** After fauxqs has loaded a queue from disk, each group in sequence order: its SELECT has no ORDER BY. */
function sortGroups(queue: FauxqsQueue): void {
  if (!queue.isFifo()) return;
  for (const group of queue.fifoMessages.values()) group.sort(bySequence);
  for (const group of queue.fifoDelayed.values()) group.sort(bySequence);
}

/** SQS's ceiling on a message's time in flight, counted from the receive: 12 hours. */
const MAX_TOTAL_VISIBILITY_MS = 43_200_000;

/** fauxqs's `SqsError`: what its router answers as an SQS error (code and message). */
type SqsErrorClass = new (code: string, message: string) => Error;

/** An action's handler as fauxqs's `SqsRouter` calls it. */
type ActionHandler = (body: unknown, store: unknown, request: unknown) => unknown;

const visibilityChangeSchema = z.looseObject({ QueueUrl: z.string(), ReceiptHandle: z.string(), VisibilityTimeout: z.number() });
const visibilityBatchSchema = z.looseObject({
  QueueUrl: z.string(),
  Entries: z.array(z.looseObject({ Id: z.string(), ReceiptHandle: z.string(), VisibilityTimeout: z.number() })),
});
const visibilityBatchResultSchema = z.object({ Successful: z.array(z.unknown()), Failed: z.array(z.unknown()) });

/**
 * SQS's refusal of a visibility change that would keep the message in flight past 12 hours from
 * its receive, or undefined (also for a message this override did not hand out: fauxqs then
 * answers as it does).
 */
function beyondTwelveHours(store: unknown, queueUrl: string, receiptHandle: string, timeoutSeconds: number): string | undefined {
  const getQueue: unknown = typeof store === 'object' && store !== null ? Reflect.get(store, 'getQueue') : undefined;
  if (typeof getQueue !== 'function') return undefined;
  const queue: unknown = Reflect.apply(getQueue, store, [queueUrl]);
  const inflight: unknown = typeof queue === 'object' && queue !== null ? Reflect.get(queue, 'inflightMessages') : undefined;
  const entry: unknown = inflight instanceof Map ? inflight.get(receiptHandle) : undefined;
  const receivedAt: unknown = typeof entry === 'object' && entry !== null ? Reflect.get(entry, 'receivedAt') : undefined;
  if (typeof receivedAt !== 'number' || Date.now() + timeoutSeconds * 1000 <= receivedAt + MAX_TOTAL_VISIBILITY_MS) return undefined;
  return `Value ${timeoutSeconds} for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds].`;
}

/**
 * Wraps fauxqs's visibility actions so that a change past 12 hours from the receive is refused as
 * SQS refuses it: `InvalidParameterValue`, for the request, or in a batch for that entry alone
 * (fauxqs's batch action calls the store with no per-entry catch, so the store cannot refuse it).
 */
function refuseBeyondTwelveHours(action: string, handler: ActionHandler, SqsError: SqsErrorClass): ActionHandler {
  if (action === 'ChangeMessageVisibility') {
    return (body, store, request) => {
      const change = visibilityChangeSchema.safeParse(body);
      const refusal = change.success ? beyondTwelveHours(store, change.data.QueueUrl, change.data.ReceiptHandle, change.data.VisibilityTimeout) : undefined;
      if (refusal !== undefined) throw new SqsError('InvalidParameterValue', refusal);
      return handler(body, store, request);
    };
  }
  if (action !== 'ChangeMessageVisibilityBatch') return handler;
  return async (body, store, request) => {
    const batch = visibilityBatchSchema.safeParse(body);
    // A malformed batch, or one with an Id twice, is fauxqs's to refuse whole, as SQS does.
    if (!batch.success || new Set(batch.data.Entries.map((entry) => entry.Id)).size !== batch.data.Entries.length) return handler(body, store, request);
    const refused = batch.data.Entries.flatMap((entry) => {
      const refusal = beyondTwelveHours(store, batch.data.QueueUrl, entry.ReceiptHandle, entry.VisibilityTimeout);
      return refusal === undefined ? [] : [{ Id: entry.Id, SenderFault: true, Code: 'InvalidParameterValue', Message: refusal }];
    });
    if (refused.length === 0) return handler(body, store, request);
    const refusedIds = new Set(refused.map((entry) => entry.Id));
    const rest = batch.data.Entries.filter((entry) => !refusedIds.has(entry.Id));
    if (rest.length === 0) return { Successful: [], Failed: refused };
    const result = visibilityBatchResultSchema.parse(await handler({ ...batch.data, Entries: rest }, store, request));
    return { Successful: result.Successful, Failed: [...refused, ...result.Failed] };
  };
}

async function readInstalledVersion(entryUrl: string): Promise<string> {
  const packageJson: unknown = JSON.parse(await readFile(new URL('../package.json', entryUrl), 'utf8'));
  return packageJsonSchema.parse(packageJson).version;
}

/**
 * Installs the override on fauxqs's classes, once per process; call it before `startFauxqs`, which
 * loads a data directory through the patched loader.
 * @throws FauxqsPatchError when the installed fauxqs is not {@link FAUXQS_PATCHED_VERSION} or lacks
 *   a method the override replaces or calls: an upgrade must not silently bring back one message
 *   per group.
 */
export async function installFauxqsFifoBatches(): Promise<void> {
  // fauxqs exports only its entry point; its classes live beside it in dist/.
  const entryUrl = import.meta.resolve('fauxqs');
  const version = await readInstalledVersion(entryUrl);
  if (version !== FAUXQS_PATCHED_VERSION) {
    throw new FauxqsPatchError(
      `fauxqs ${version} is installed; the FIFO batch override (local/fauxqs-fifo-batches.ts) was written for ${FAUXQS_PATCHED_VERSION}. ` +
        'Check whether the new release still hands out one message per group, then update or remove the override.',
    );
  }
  const [storeModule, persistenceModule, routerModule, errorsModule]: unknown[] = await Promise.all([
    import(new URL('./sqs/sqsStore.js', entryUrl).href),
    import(new URL('./persistence.js', entryUrl).href),
    import(new URL('./sqs/sqsRouter.js', entryUrl).href),
    import(new URL('./common/errors.js', entryUrl).href),
  ]);
  const queue = methodsOf(storeModule, 'SqsQueue');
  const persistence = methodsOf(persistenceModule, 'PersistenceManager');
  const router = methodsOf(routerModule, 'SqsRouter');
  const sqsError: unknown = typeof errorsModule === 'object' && errorsModule !== null ? Reflect.get(errorsModule, 'SqsError') : undefined;
  if (typeof sqsError !== 'function') throw new FauxqsPatchError('fauxqs no longer exports SqsError; the override (local/fauxqs-fifo-batches.ts) must be rewritten');
  if (Reflect.get(queue.prototype, INSTALLED) === true) return;

  const changeVisibility = queue.original('changeVisibility');
  const processTimers = queue.original('processTimers');
  const loadSqsMessages = persistence.original('loadSqsMessages');
  const notifyWaiters = queue.original('notifyWaiters');
  const register = router.original('register');
  // The router registers its actions when fauxqs builds its app, after this install.
  Reflect.set(router.prototype, 'register', function (this: unknown, action: string, handler: ActionHandler): void {
    Reflect.apply(register, this, [action, refuseBeyondTwelveHours(action, handler, sqsError as SqsErrorClass)]);
  });
  Reflect.set(queue.prototype, 'dequeueFifo', dequeueFifoInBatches);
  Reflect.set(queue.prototype, 'processTimers', function (this: FauxqsQueue): void {
    if (this.isFifo()) processFifoTimers(this);
    else Reflect.apply(processTimers, this, []);
  });
  Reflect.set(queue.prototype, 'notifyWaiters', function (this: FauxqsQueue): void {
    if (this.isFifo()) wakeOneWaiter(this, notifyWaiters);
    else Reflect.apply(notifyWaiters, this, []);
  });
  Reflect.set(queue.prototype, 'changeVisibility', function (this: FauxqsQueue, receiptHandle: string, timeoutSeconds: number): void {
    const entry = this.inflightMessages.get(receiptHandle);
    if (entry !== undefined && timeoutSeconds === 0) makeVisible(this, entry);
    else Reflect.apply(changeVisibility, this, [receiptHandle, timeoutSeconds]);
  });
  Reflect.set(persistence.prototype, 'loadSqsMessages', function (this: unknown, loaded: FauxqsQueue): void {
    Reflect.apply(loadSqsMessages, this, [loaded]);
    sortGroups(loaded);
  });
  Reflect.set(queue.prototype, INSTALLED, true);
}
