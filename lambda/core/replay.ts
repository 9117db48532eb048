/**
 * Replay of a window: `POST /v1/subscriptions/{id}/replay {"since", "until"}` sends again every
 * event of the subscription accepted in the window and delivered, per key in the order of its
 * numbers, with its original `webhook-id` and `webhook-sequence`, marked `webhook-redelivery:
 * true`. Each goes into its key's group as a redrive does (behind whatever is queued there; live
 * events accepted meanwhile queue behind it), with `redrive.replay` so that the consumer attempts
 * it although the event was delivered before. One replay per subscription at a time, its state on
 * the subscription; each call is one bounded step, repeated until `is_done`.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { ErrorCode, type ErrorDetail, type Refusal } from './api-error.js';
import type { DeliveredLookup } from './delivery.js';
import { SendFailureKind, sendInKeyOrder, SendStatus, type OutgoingMessage, type SendBatch } from './enqueue-plan.js';
import { encodeQueuedEvent, publicEventIdOf, type Parsed, type QueuedEvent } from './event.js';
import { numberIn, type KeptEvent, type KeptEventStore, type RunNumbers } from './kept-event.js';
import { PAUSE_GRACE_SECONDS } from './routing-settings.js';

/**
 * Kept messages read at a time: each holds up to MAX_EVENTS_PER_MESSAGE events, so a page is at
 * most 100 events (one BatchGetItem of their records). A key's events go one per
 * SendMessageBatch (the ingest rule), so a page of one busy key is up to 100 calls: small pages
 * keep each step's time checks frequent.
 */
export const REPLAY_PAGE_SIZE = 10;

/** Most events one step replays, so that its answer stays small whatever the time left. */
export const MAX_REPLAYED_PER_STEP = 1000;

/** How long a step holds the replay (`ReplayState.leaseUntil`): past the operations function's timeout. */
export const REPLAY_LEASE_SECONDS = 60;

/** `POST /v1/subscriptions/{id}/replay`'s body. `until` absent: now, or later (see `parseReplayWindow`). */
export const replayBodySchema = z.strictObject({
  since: z.iso.datetime({ offset: true }).meta({ description: 'Start of the window of acceptance times, inclusive (RFC 3339).' }),
  until: z.iso.datetime({ offset: true }).optional().meta({ description: "End of the window, inclusive; not in the future. Default: now, or the subscription's newest acceptance time if that is later (ingest's clock ahead of the operations function's)." }),
});

/** The window of acceptance times a replay sends again, both bounds inclusive, as UTC ISO times. */
export interface ReplayWindow {
  readonly since: string;
  readonly until: string;
}

/**
 * Reads a replay's window. Refused (`invalid_request`, the field named): `since` after `until`,
 * `until` in the future, `since` before the oldest event kept (`retentionDays` ago; none with 0).
 * With no `until`, the window ends now, or at the subscription's newest acceptance
 * (`newestAcceptedAt`, stamped by ingest's clock) if that is later: a replay asked for after an
 * event was answered sends it, however far the operations function's clock is behind ingest's.
 */
export function parseReplayWindow(body: z.infer<typeof replayBodySchema>, now: Date, retentionDays: number, newestAcceptedAt?: string): Parsed<ReplayWindow> {
  const since = new Date(body.since);
  const newest = newestAcceptedAt === undefined ? Number.NEGATIVE_INFINITY : Date.parse(newestAcceptedAt);
  const until = body.until !== undefined ? new Date(body.until) : newest > now.getTime() ? new Date(newest) : now;
  const refuse = (details: ErrorDetail[]): Parsed<ReplayWindow> => ({ ok: false, refusal: { code: ErrorCode.invalidRequest, message: 'The replay window is not valid.', details } });
  if (body.until !== undefined && until.getTime() > now.getTime()) return refuse([{ path: 'until', message: `is in the future (now is ${now.toISOString()})` }]);
  if (since.getTime() > until.getTime()) return refuse([{ path: 'since', message: `is after until (${until.toISOString()})` }]);
  const oldest = new Date(now.getTime() - retentionDays * 86_400_000);
  if (retentionDays === 0) return refuse([{ path: 'since', message: 'no event is kept for a replay (EVENT_RETENTION_DAYS=0)' }]);
  if (since.getTime() < oldest.getTime()) return refuse([{ path: 'since', message: `is older than the events kept (EVENT_RETENTION_DAYS=${retentionDays}: since ${oldest.toISOString()} at the earliest)` }]);
  return { ok: true, value: { since: since.toISOString(), until: until.toISOString() } };
}

/** A replay under way, as the subscription's item holds it. */
export interface ReplayState extends ReplayWindow {
  readonly startedAt: string;
  /** Where the next step reads on (a kept-event page's `nextAfter`); absent before the first page. */
  readonly after?: string;
  /** The acceptance time of the last event read: how far into the window the replay is. */
  readonly reached?: string;
  /** Events sent again. */
  readonly replayed: number;
  /** Events of the window that are dead letters now: a redrive sends them, not a replay. */
  readonly deadLettered: number;
  /** Events of the window not delivered yet (still queued, or their number unknown): they are still to come. */
  readonly notDelivered: number;
  /** Until when a step holds the replay: no other step starts before, unless it ended. */
  readonly leaseUntil?: string;
  /** When it was cancelled (`DELETE /v1/subscriptions/{id}/replay`), for the last replay. */
  readonly cancelledAt?: string;
}

/** What a replay's state store does; the subscription's item holds the state. */
export interface ReplayStateStore {
  /**
   * Starts `state` unless a replay is under way, or (for a window whose end was named,
   * `isUntilGiven`) the last one was of the same window: the state in force then (`isDone` for the
   * last one, ended), and whether this call started it; undefined for no subscription. A window
   * that ends by default (now, or the newest acceptance) starts a new replay whatever the last one.
   */
  readonly start: (subscriptionId: string, state: ReplayState, options: { readonly isUntilGiven: boolean }) => Promise<{ readonly state: ReplayState; readonly isNew: boolean; readonly isDone?: boolean } | undefined>;
  /**
   * Holds the replay begun at `startedAt` (without it: the one under way) until `leaseUntil`,
   * unless a step holds it at `now`: its state then, else undefined.
   */
  readonly claim: (input: { readonly subscriptionId: string; readonly startedAt: string | undefined; readonly now: string; readonly leaseUntil: string }) => Promise<ReplayState | undefined>;
  /** The subscriptions with a replay under way (an index of them, eventually consistent). */
  readonly listUnderWay: () => Promise<readonly string[]>;
  /** Writes a step's progress, the lease let go, if the replay begun at `state.startedAt` is still the one in force. */
  readonly save: (subscriptionId: string, state: ReplayState) => Promise<void>;
  /** Ends the replay begun at `state.startedAt`, keeping its final counts as the subscription's last replay. */
  readonly finish: (subscriptionId: string, state: ReplayState) => Promise<void>;
  /**
   * Cancels the replay under way, keeping it, marked cancelled, as the last replay: what it was;
   * `isCancelled: false` when none is under way; undefined for no subscription. A step under way
   * ends its pass, and its saves change nothing.
   */
  readonly cancel: (subscriptionId: string, now: string) => Promise<{ readonly isCancelled: true; readonly state: ReplayState } | { readonly isCancelled: false } | undefined>;
}

/** What a kept event's record says of it, for a replay (see `EventStore.readOutcomes`). */
export interface ReplayRecord {
  readonly status: 'accepted' | 'delivered' | 'dead_lettered' | undefined;
  readonly sequence: number | undefined;
  /** The place ingest recorded for its first message (`queuePositionOf`). */
  readonly queuePosition: string | undefined;
  /** The number of its last give-up (`giveUpNumberOf`), if it was ever given up. */
  readonly giveUp?: number | undefined;
  /** The key it was recorded under: the one it was delivered under, when a resend's copy was kept under another. */
  readonly orderingKey?: string | undefined;
}

export interface ReplayPorts {
  readonly kept: Pick<KeptEventStore, 'readWindow' | 'findNumbers'>;
  /** The records of events, by id; an event without one is absent. */
  readonly readRecords: (eventIds: readonly string[]) => Promise<ReadonlyMap<string, ReplayRecord>>;
  /** How far each key's deliveries recorded on the key reach (a run's). */
  readonly findDelivered: (orderingKeys: readonly string[]) => Promise<DeliveredLookup>;
  readonly enqueue: SendBatch;
  /** Counts replayed events as pending in the group they go to. */
  readonly recordReplayed: (input: { readonly toGroup: string; readonly orderingKey: string; readonly events: number; readonly at: string }) => Promise<void>;
  /** The message group a key routes to now. */
  readonly groupOf: (orderingKey: string) => string;
  readonly now: () => Date;
  readonly hasTime: () => boolean;
}

export interface ReplayStep {
  readonly state: ReplayState;
  readonly isDone: boolean;
  /** Events SQS refused permanently in this step: repeating cannot send them (see `SendFailureKind`). */
  readonly refused: readonly { readonly event_id: string; readonly code: string }[];
}

/** Whether a replay step may run now: like a redrive, it routes by the routing in force. */
export function checkReplay(routing: { readonly isPaused: boolean }): Refusal | undefined {
  return routing.isPaused ? { code: ErrorCode.ingestPaused, message: 'Ingest is paused for a routing switch; replay after it resumes.' } : undefined;
}

/**
 * The SQS deduplication id of an event's copy in one replay: the same for a step repeated after
 * a crash (SQS drops it within 5 minutes), another for another replay.
 */
export function replayDeduplicationId(eventId: string, startedAt: string): string {
  return `replay-${createHash('sha256').update(`${eventId}\n${startedAt}`).digest('hex')}`;
}

/**
 * The queued event a replay sends: as ingest queued it, routed anew, its number kept, marked as a
 * copy of the replay begun at `startedAt` (what settles it: an outcome of this replay's copy, never a
 * time compared across functions' clocks), with the number of the event's last give-up (0 for none:
 * a give-up of this copy is numbered after it, see `giveUpNumberOf`).
 */
export function toReplayedEvent(queued: QueuedEvent, sequence: number, group: string, at: string, replay: { readonly startedAt: string; readonly giveUp: number | undefined }): QueuedEvent {
  return { ...queued, message_group_id: group, redrive: { sequence, redriven_at: at, replay: true, replay_id: replay.startedAt, give_up: replay.giveUp ?? 0 } };
}

/** Whether a kept body is a resend's copy: kept at another place than the one its record names. */
function isCopy(event: KeptEvent, record: ReplayRecord): boolean {
  return record.queuePosition !== undefined && event.queuePosition !== undefined && record.queuePosition !== event.queuePosition;
}

/**
 * The kept body under the key its record names. They differ only for a resend's copy kept after a
 * change of ordering, when the first copy, under the old key, was delivered before the resend was
 * recorded: its number is that key's, and so must be its key.
 */
function underRecordedKey(event: KeptEvent, record: ReplayRecord): KeptEvent {
  if (record.orderingKey === undefined || record.orderingKey === event.queued.ordering_key) return event;
  return { ...event, queued: { ...event.queued, ordering_key: record.orderingKey } };
}

/** A kept event's fate in a replay. */
type Judged = { readonly kind: 'replay'; readonly event: KeptEvent; readonly sequence: number; readonly giveUp?: number | undefined } | { readonly kind: 'dead_lettered' | 'not_delivered' | 'copy' };

/**
 * What a replay does with each kept event of a page. Its record decides: a body kept at another
 * place than the record's is a resend's copy (never delivered: skipped); a dead letter is left to
 * redrive; a delivered event is sent again with the number on its record; an event whose record
 * shows neither (a run's member, recorded on the key alone) is sent again with its run's number,
 * if the key's deliveries recorded on the key reach it; anything else was not delivered yet.
 */
async function judgePage(subscriptionId: string, events: readonly KeptEvent[], ports: ReplayPorts): Promise<Judged[]> {
  const records = await ports.readRecords(events.map((event) => event.queued.event.event_id));
  const runs = new Map<string, RunNumbers | undefined>();
  const numbered = events.map((event) => ({ event, record: records.get(event.queued.event.event_id), runNumber: undefined as number | undefined }));
  // Run numbers one key at a time, in place order: one read serves every event of a run.
  const byPlace = [...numbered].sort((a, b) => ((a.event.queuePosition ?? '') < (b.event.queuePosition ?? '') ? -1 : 1));
  for (const entry of byPlace) {
    const { event, record } = entry;
    if (record?.status !== 'accepted' || event.queuePosition === undefined || isCopy(event, record)) continue;
    const eventId = event.queued.event.event_id;
    const key = event.queued.ordering_key;
    let number = numberIn(runs.get(key), eventId);
    if (number === undefined) {
      const run = await ports.kept.findNumbers({ subscriptionId, orderingKey: key, queuePosition: event.queuePosition });
      runs.set(key, run);
      number = numberIn(run, eventId);
    }
    entry.runNumber = number;
  }
  const keysOnKey = [...new Set(numbered.filter((entry) => entry.runNumber !== undefined).map((entry) => entry.event.queued.ordering_key))];
  const delivered = keysOnKey.length === 0 ? () => undefined : await ports.findDelivered(keysOnKey);
  return numbered.map(({ event, record, runNumber }): Judged => {
    if (record === undefined) return { kind: 'not_delivered' };
    if (isCopy(event, record)) return { kind: 'copy' };
    if (record.status === 'dead_lettered') return { kind: 'dead_lettered' };
    if (record.status === 'delivered') return record.sequence === undefined ? { kind: 'not_delivered' } : { kind: 'replay', event: underRecordedKey(event, record), sequence: record.sequence, giveUp: record.giveUp };
    const through = delivered(event.queued.ordering_key)?.sequence;
    return runNumber !== undefined && through !== undefined && runNumber <= through ? { kind: 'replay', event, sequence: runNumber } : { kind: 'not_delivered' };
  });
}

/**
 * How much later than another event of its key an event with a lower number can have been
 * accepted: ingest takes its acceptance time before it sends, and a request ends within API
 * Gateway's 30 s (ingest's timeout is no longer, see PAUSE_GRACE_SECONDS). So a key's events read
 * up to acceptance time T hold every lower number of those accepted up to T less this.
 */
export const ACCEPTANCE_SKEW_SECONDS = PAUSE_GRACE_SECONDS;

/** Most events one pass of a step sends: a key's go one per SendMessageBatch, so a pass stays seconds long. */
export const MAX_REPLAYED_PER_PASS = 100;

/**
 * The longest prefix of `entries`, up to `limit` (or, when no shorter one will do, the shortest
 * beyond it, up to `ready`), that can be sent before the rest: no key has an event in it numbered
 * above one of its events after it, and no kept message is split (its events share a `cursor`). An
 * inversion (i before j, one key, i's number above j's) forbids every cut from i + 1 to j; each j's
 * earliest such i is the first of its key's running maxima above it. 0 when none will do.
 */
export function safePrefixLength(entries: readonly { readonly key: string; readonly number: number | undefined; readonly cursor: string }[], limit: number, ready: number): number {
  const blocked = new Array<number>(entries.length + 2).fill(0);
  const forbid = (from: number, to: number): void => {
    blocked[from] = (blocked[from] ?? 0) + 1;
    blocked[to + 1] = (blocked[to + 1] ?? 0) - 1;
  };
  const maxima = new Map<string, { readonly number: number; readonly index: number }[]>();
  for (const [j, { key, number, cursor }] of entries.entries()) {
    if (j > 0 && entries[j - 1]?.cursor === cursor) forbid(j, j);
    if (number === undefined) continue;
    const list = maxima.get(key) ?? [];
    let low = 0;
    let high = list.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((list[middle]?.number ?? 0) > number) high = middle;
      else low = middle + 1;
    }
    const earliest = list[low];
    if (earliest !== undefined) forbid(earliest.index + 1, j);
    if ((list.at(-1)?.number ?? 0) < number) list.push({ number, index: j });
    maxima.set(key, list);
  }
  const valid: number[] = [];
  let open = 0;
  for (let cut = 0; cut <= Math.min(ready, entries.length); cut += 1) {
    open += blocked[cut] ?? 0;
    if (open === 0 && cut > 0) valid.push(cut);
  }
  return valid.filter((cut) => cut <= limit).at(-1) ?? valid[0] ?? 0;
}

/**
 * One step of a replay whose lease this caller holds: reads the window in acceptance order and
 * sends each key's delivered events in the order of their numbers. Acceptance order is not number
 * order (two requests of a key in flight together reach the queue in either order, at most
 * ACCEPTANCE_SKEW_SECONDS apart), so an event is sent only once everything accepted up to that
 * long after it was read (or the window ended), and then only in a prefix of what was read that
 * leaves no lower number of its key behind (`safePrefixLength`): what is read beyond is read again
 * by the next step. Each pass sends at most MAX_REPLAYED_PER_PASS events, by the ingest rule (one
 * SendMessageBatch never carries two events of one key; once SQS refuses one, nothing later of its
 * key is sent), counts them pending in their groups, then saves how far it sent. A pass not sent
 * whole ends the step, unsaved: the next sends it again from its start, each copy with the same
 * deduplication id (dropped by SQS within 5 minutes; later, delivered again: at least once), and
 * counts it again.
 */
export async function replayStep(subscriptionId: string, claimed: ReplayState, ports: ReplayPorts, save: (state: ReplayState) => Promise<void>): Promise<ReplayStep> {
  let state: ReplayState = claimed;
  const refused: { event_id: string; code: string }[] = [];
  let sent = 0;
  /** Read and not sent yet, in acceptance order, each judged once; the reads go on after the last of them. */
  let buffer: { readonly event: KeptEvent & { readonly cursor: string }; readonly judged: Judged }[] = [];
  let readAfter = state.after;
  let isWindowRead = false;
  while (ports.hasTime() && sent < MAX_REPLAYED_PER_STEP && !(isWindowRead && buffer.length === 0)) {
    if (!isWindowRead) {
      const page = await ports.kept.readWindow({ subscriptionId, since: state.since, until: state.until, after: readAfter, limit: REPLAY_PAGE_SIZE });
      const judged = await judgePage(subscriptionId, page.events, ports);
      buffer = [...buffer, ...page.events.map((event, index) => ({ event, judged: judged[index] ?? ({ kind: 'not_delivered' } as const) }))];
      readAfter = page.nextAfter ?? readAfter;
      isWindowRead = page.nextAfter === undefined;
    }
    const lastRead = buffer.at(-1)?.event.queued.accepted_at;
    const horizon = isWindowRead || lastRead === undefined ? Number.POSITIVE_INFINITY : Date.parse(lastRead) - ACCEPTANCE_SKEW_SECONDS * 1000;
    const firstUnready = buffer.findIndex(({ event }) => Date.parse(event.queued.accepted_at) > horizon);
    const entries = buffer.map(({ event, judged }) => (judged.kind === 'replay' ? { key: judged.event.queued.ordering_key, number: judged.sequence, cursor: event.cursor } : { key: event.queued.ordering_key, number: undefined, cursor: event.cursor }));
    const cut = safePrefixLength(entries, MAX_REPLAYED_PER_PASS, firstUnready < 0 ? buffer.length : firstUnready);
    if (cut === 0) continue;
    const ready = buffer.slice(0, cut);
    const judged = ready.map((entry) => entry.judged);
    const at = ports.now().toISOString();
    const ordered = orderPerKey(judged.flatMap((entry) => (entry.kind === 'replay' ? [entry] : [])));
    const messages: OutgoingMessage[] = ordered.map(({ event, sequence, giveUp }, index) => {
      const group = ports.groupOf(event.queued.ordering_key);
      return {
        index,
        orderingKey: event.queued.ordering_key,
        messageGroupId: group,
        deduplicationId: replayDeduplicationId(event.queued.event.event_id, state.startedAt),
        body: encodeQueuedEvent(toReplayedEvent(event.queued, sequence, group, at, { startedAt: state.startedAt, giveUp })),
      };
    });
    const { statuses, failures } = await sendInKeyOrder(messages, ports.enqueue);
    for (const [index, failure] of failures) {
      if (failure.kind !== SendFailureKind.transient) refused.push({ event_id: ordered[index] === undefined ? '' : publicEventIdOf(ordered[index].event.queued), code: failure.code });
    }
    const sentMessages = messages.filter((message) => statuses.get(message.index) === SendStatus.sent);
    // Counted pending where they went, one write per key and group.
    const perGroup = new Map<string, { toGroup: string; orderingKey: string; events: number }>();
    for (const message of sentMessages) {
      const id = `${message.messageGroupId}\n${message.orderingKey}`;
      const counted = perGroup.get(id) ?? { toGroup: message.messageGroupId, orderingKey: message.orderingKey, events: 0 };
      counted.events += 1;
      perGroup.set(id, counted);
    }
    await Promise.all([...perGroup.values()].map((counted) => ports.recordReplayed({ ...counted, at })));
    sent += sentMessages.length;
    // Sent again from its start next time, until all of it was sent.
    if (sentMessages.length < messages.length) return { state, isDone: false, refused };
    const count = (kind: Judged['kind']) => judged.filter((entry) => entry.kind === kind).length;
    const last = ready.at(-1)?.event;
    buffer = buffer.slice(cut);
    state = {
      ...state,
      ...(last === undefined ? {} : { after: last.cursor, reached: last.queued.accepted_at }),
      replayed: state.replayed + messages.length,
      deadLettered: state.deadLettered + count('dead_lettered'),
      notDelivered: state.notDelivered + count('not_delivered'),
    };
    if (isWindowRead && buffer.length === 0) break;
    await save(state);
  }
  // Done once the window was read and all of it sent (a window may hold nothing).
  if (isWindowRead && buffer.length === 0) return { state: { ...state, reached: state.until }, isDone: true, refused };
  return { state, isDone: false, refused };
}

/** The events to send, each key's in the order of its numbers, keys in the order they first appear. */
function orderPerKey<T extends { readonly event: KeptEvent; readonly sequence: number }>(entries: readonly T[]): T[] {
  const byKey = new Map<string, T[]>();
  for (const entry of entries) {
    const key = entry.event.queued.ordering_key;
    byKey.set(key, [...(byKey.get(key) ?? []), entry]);
  }
  return [...byKey.values()].flatMap((list) => [...list].sort((a, b) => a.sequence - b.sequence));
}

/** The ports of a replay request: its state store beside the step's ports. */
export interface ReplayRequestPorts extends ReplayPorts {
  readonly states: Pick<ReplayStateStore, 'start' | 'claim' | 'save' | 'finish'>;
}

/** What a replay request came to. */
export type ReplayOutcome =
  | { readonly kind: 'stepped'; readonly state: ReplayState; readonly isDone: boolean; readonly refused: ReplayStep['refused'] }
  /** Another caller's step holds the replay now: its state as it stood. */
  | { readonly kind: 'busy'; readonly state: ReplayState }
  | { readonly kind: 'not_found' }
  /** A replay of another window is under way: nothing was started. */
  | { readonly kind: 'other_window'; readonly state: ReplayState };

/**
 * Starts a replay of `window` and makes its first step, or makes the next step of the one under
 * way when it is of the same window (`until` absent from the request matches any). Never a second
 * replay while one is under way: a request repeated after its answer was lost steps the same one.
 */
export async function requestReplay(subscriptionId: string, window: ReplayWindow & { readonly isUntilGiven: boolean }, ports: ReplayRequestPorts): Promise<ReplayOutcome> {
  const now = ports.now();
  const leaseUntil = new Date(now.getTime() + REPLAY_LEASE_SECONDS * 1000).toISOString();
  const started = await ports.states.start(subscriptionId, { since: window.since, until: window.until, startedAt: now.toISOString(), replayed: 0, deadLettered: 0, notDelivered: 0, leaseUntil }, { isUntilGiven: window.isUntilGiven });
  if (started === undefined) return { kind: 'not_found' };
  const inForce = started.state;
  if (started.isDone === true) return { kind: 'stepped', state: inForce, isDone: true, refused: [] };
  if (!started.isNew && (inForce.since !== window.since || (window.isUntilGiven && inForce.until !== window.until))) return { kind: 'other_window', state: inForce };
  const claimed = started.isNew ? inForce : await ports.states.claim({ subscriptionId, startedAt: inForce.startedAt, now: now.toISOString(), leaseUntil });
  if (claimed === undefined) return { kind: 'busy', state: inForce };
  return stepClaimed(subscriptionId, claimed, ports);
}

/** Makes one step of a replay this caller holds, then saves it with the lease let go, or ends it. */
export async function stepClaimed(subscriptionId: string, claimed: ReplayState, ports: ReplayPorts & { readonly states: Pick<ReplayStateStore, 'save' | 'finish'> }): Promise<Extract<ReplayOutcome, { kind: 'stepped' }>> {
  const step = await replayStep(subscriptionId, claimed, ports, (state) => ports.states.save(subscriptionId, state));
  const { leaseUntil: _held, ...state } = step.state;
  if (step.isDone) await ports.states.finish(subscriptionId, state);
  else await ports.states.save(subscriptionId, state);
  return { kind: 'stepped', state, isDone: step.isDone, refused: step.refused };
}

/**
 * The lag job's part, each minute: a step of each replay under way that no step holds, while its
 * time lasts, so that a replay ends without its caller. What it stepped, and how many ended.
 */
export async function stepReplaysUnderWay(ports: ReplayPorts & { readonly states: Pick<ReplayStateStore, 'listUnderWay' | 'claim' | 'save' | 'finish'> }): Promise<{ readonly stepped: readonly string[]; readonly done: number }> {
  const stepped: string[] = [];
  let done = 0;
  for (const subscriptionId of await ports.states.listUnderWay()) {
    if (!ports.hasTime()) break;
    const now = ports.now();
    const leaseUntil = new Date(now.getTime() + REPLAY_LEASE_SECONDS * 1000).toISOString();
    const claimed = await ports.states.claim({ subscriptionId, startedAt: undefined, now: now.toISOString(), leaseUntil });
    if (claimed === undefined) continue;
    const outcome = await stepClaimed(subscriptionId, claimed, ports);
    stepped.push(subscriptionId);
    if (outcome.isDone) done += 1;
  }
  return { stepped, done };
}
