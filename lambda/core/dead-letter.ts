/**
 * Dead letters: events the consumer gave up on, kept whole in a store that is their only source
 * of truth, so that each one can be listed and redriven in its key's order. Never the FIFO
 * dead-letter queue: SQS drops a second send of a deduplication id for 5 minutes even after the
 * first was deleted, and hands out nothing more of a group while any of its messages is in flight.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { ErrorCode } from './api-error.js';
import { parseWith, publicEventIdOf, subscriptionIdSchema, type Parsed, type QueuedEvent } from './event.js';
import { encodeCursor, parsePageQuery } from './paging.js';
import { messageGroupIdFor } from './routing.js';
import { schemaOf } from './schema-match.js';
import { RawJson, stringifyJson } from './raw-json.js';

/** An event given up, whole: what redrive needs to send it again exactly as it was. */
export interface DeadLetter {
  /** The event as it was queued (its last redrive included, if any). */
  readonly queued: QueuedEvent;
  /** Its `webhook-sequence`; unknown for an event SQS's backstop moved before it had one. */
  readonly sequence: number | undefined;
  /** Real attempts made in its last series. */
  readonly attempts: number;
  readonly reason: string;
  readonly deadLetteredAt: string;
}

/** A dead letter as the store holds it: where it sits and where it died. */
export interface StoredDeadLetter extends DeadLetter {
  readonly subscriptionId: string;
  /** Its place in the subscription's list: see {@link positionOf}. */
  readonly position: string;
  /** The ordering key whose order it keeps. */
  readonly orderingKey: string;
  /** The message group it died in, whose lag counts it. */
  readonly messageGroupId: string;
}

/** One row of `GET /v1/dead-letters` (docs/api.md#routes): no payload. */
export interface DeadLetterRow {
  readonly event_id: string;
  readonly subscription_id: string;
  readonly message_group_id: string;
  /** null for an event SQS's backstop moved before it had a sequence. */
  readonly sequence: number | null;
  readonly attempts: number;
  readonly reason: string;
  readonly dead_lettered_at: string;
}

/** {@link DeadLetterRow} as the API document shows it. */
export const deadLetterRowSchema = schemaOf<DeadLetterRow>()(
  z.strictObject({
    event_id: z.string(),
    subscription_id: z.string(),
    message_group_id: z.string(),
    sequence: z.number().int().positive().nullable(),
    attempts: z.number().int().nonnegative(),
    reason: z.string(),
    dead_lettered_at: z.iso.datetime(),
  }),
);

/** What the consumer and the operations function read and write in the store. */
export interface DeadLetterStore {
  /** Keeps a dead letter, replacing one of the same event at the same position. */
  readonly put: (letter: DeadLetter) => Promise<void>;
  /** Up to `limit` of a subscription's dead letters after `after` (a position), in position order. */
  readonly readPage: (input: { readonly subscriptionId: string; readonly after: string | undefined; readonly limit: number }) => Promise<DeadLetterPage>;
  /**
   * Removes a dead letter that was redriven, only if it is still the one that was read (the same
   * `deadLetteredAt`): a redriven event given up again meanwhile was written back and must stay.
   */
  readonly remove: (letter: StoredDeadLetter) => Promise<RemoveOutcome>;
  /** How many dead letters the subscription has: a count kept beside them (see the adapter). */
  readonly count: (subscriptionId: string) => Promise<number>;
}

/** What became of a dead letter a redrive meant to remove. */
export const RemoveOutcome = {
  removed: 'removed',
  /** Its place holds another dead-lettering of the event (given up again after its redrive): it stays. */
  replaced: 'replaced',
  /** Nothing is in its place any more: removed by another step. */
  gone: 'gone',
} as const;
export type RemoveOutcome = (typeof RemoveOutcome)[keyof typeof RemoveOutcome];

/**
 * Where a dead letter is listed: one item of the store per place, whatever the number of times it
 * was written there. The lag counts a group's dead letters by their places (see `GroupStore`), so
 * that its count follows the list exactly, whoever writes first and however often.
 */
export interface DeadLetterPlace {
  readonly subscriptionId: string;
  readonly position: string;
  /** The message group it died in, whose lag counts it. */
  readonly messageGroupId: string;
}

/** The place of a dead letter about to be written: where `put` writes it. */
export function placeOf(letter: Pick<DeadLetter, 'queued' | 'sequence'>): DeadLetterPlace {
  return { subscriptionId: letter.queued.event.subscription_id, position: positionOf(letter), messageGroupId: letter.queued.message_group_id };
}

/** Where events too large for a store item are kept, by key; an S3 bucket when deployed. */
export interface PayloadStore {
  readonly put: (key: string, body: string) => Promise<void>;
  readonly get: (key: string) => Promise<string>;
  readonly remove: (key: string) => Promise<void>;
}

export interface DeadLetterPage {
  readonly letters: readonly StoredDeadLetter[];
  /** The position to continue after; undefined when the subscription has no more. */
  readonly nextAfter: string | undefined;
}

/** Sequences are written with this many digits, so that positions sort as numbers do. */
const SEQUENCE_DIGITS = 12;

/**
 * A dead letter's position in its subscription's list: the digest of its ordering key (the
 * per-key message group id: fixed length, any key), then its zero-padded sequence. So a key's dead
 * letters are contiguous and in sequence order, and `<digest>#` is the prefix of one key's.
 * A dead letter without a sequence sorts after the key's numbered ones, by acceptance time:
 * it never had a number, and gets the key's next one when it is redriven.
 */
export function positionOf(letter: Pick<DeadLetter, 'queued' | 'sequence'>): string {
  const prefix = `${messageGroupIdFor(letter.queued.ordering_key, undefined)}#`;
  if (letter.sequence !== undefined) return `${prefix}${String(letter.sequence).padStart(SEQUENCE_DIGITS, '0')}`;
  return `${prefix}~${letter.queued.accepted_at}#${letter.queued.event.event_id}`;
}

/**
 * The number of the give-up of a queued event, were it given up now: 1 for its first message (or a
 * parked one), one more than the give-up a redriven copy came from, one more than the last give-up
 * a replay's copy found on its record. A chain, each link written by the one step that caused it
 * (give-up, redrive, give-up of that copy), so that the numbers grow with the give-ups whatever the
 * clocks of the functions that wrote them: the consumer and the backstop import on one side, the
 * redrive on the other, run on hosts whose clocks disagree. Undefined for a copy redriven before
 * the numbers (no `give_up`): its times decide, as they did.
 */
export function giveUpNumberOf(queued: QueuedEvent): number | undefined {
  if (queued.redrive === undefined) return 1;
  return queued.redrive.give_up === undefined ? undefined : queued.redrive.give_up + 1;
}

/**
 * The SQS deduplication id of one redrive of one dead letter: the same for the same dead-lettering
 * (so a step repeated after a crash within 5 minutes is dropped by SQS), another for a later
 * dead-lettering of the event (so no deduplication window can swallow it). A digest, as the
 * event id alone may take all of SQS's 128 characters.
 */
export function redriveDeduplicationId(letter: Pick<DeadLetter, 'queued' | 'deadLetteredAt'>): string {
  // The give-up's number too: two give-ups of one event on two hosts may carry the same time.
  const giveUp = giveUpNumberOf(letter.queued);
  return `redrive-${createHash('sha256').update(`${letter.queued.event.event_id}\n${letter.deadLetteredAt}${giveUp === undefined ? '' : `\n${giveUp}`}`).digest('hex')}`;
}

/** The list row of a stored dead letter. */
export function toDeadLetterRow(letter: Omit<StoredDeadLetter, 'queued'> & { readonly eventId: string }): DeadLetterRow {
  return {
    event_id: letter.eventId,
    subscription_id: letter.subscriptionId,
    message_group_id: letter.messageGroupId,
    sequence: letter.sequence ?? null,
    attempts: letter.attempts,
    reason: letter.reason,
    dead_lettered_at: letter.deadLetteredAt,
  };
}

/** Where a page of `GET /v1/dead-letters` ends: a position in the store, for one subscription. */
const deadLetterPositionSchema = z.strictObject({
  /** Tells a dead-letters cursor from any other list's. */
  list: z.literal('dead_letters'),
  subscription_id: subscriptionIdSchema,
  // Every dead letter's position sorts after `$` (see `positionOf`); before it, the store keeps other items.
  position: z.string().min(1).max(1024).refine((position) => position > '$', 'is no place of a dead letter'),
});

/** A page of one subscription's dead letters, as `GET /v1/dead-letters` asks for it. */
export interface DeadLettersQuery {
  readonly subscriptionId: string;
  /** The store position the page starts after; none: from the start. */
  readonly after: string | undefined;
  readonly limit: number;
  /** `include=payload`: each row with its event's `type` and `payload` (see {@link toPayloadRows}). */
  readonly withPayloads: boolean;
}

/**
 * Rows a page with payloads holds at most (its `limit` defaults to this and may not exceed it):
 * an event takes up to 1 MiB, and a Lambda answer at most 6 MB.
 */
export const MAX_PAYLOAD_PAGE_LIMIT = 10;

/**
 * A page with payloads stops growing before its rows take this many bytes as Lambda carries them:
 * the body is JSON, and Lambda's answer carries that body as a JSON string again, so each `"` and
 * `\` of a payload counts twice over. Its next row starts the next page. Below Lambda's 6 MB with
 * room for the rest of the answer; one row alone (an event is at most 1 MiB of JSON) always fits.
 */
export const MAX_PAYLOAD_PAGE_BYTES = 5 * 1024 * 1024;

/** The bytes a row takes in Lambda's answer: its JSON, written as a JSON string once more. */
function answerBytesOf(row: DeadLetterRowWithPayload): number {
  return Buffer.byteLength(JSON.stringify(stringifyJson(row)));
}

/** A dead letter's row with its event's type and payload, as `include=payload` asks. */
export interface DeadLetterRowWithPayload extends DeadLetterRow {
  readonly type: string;
  /** The payload's text as posted (see `PayloadText`), written into the answer as it is. */
  readonly payload: RawJson;
}

/**
 * The rows of a page read with payloads, as many of `letters` as keep the answer within
 * {@link MAX_PAYLOAD_PAGE_BYTES} (always the first), and the position the next page starts after:
 * the last row kept when the page was cut, else the store's own.
 */
export function toPayloadRows(letters: readonly StoredDeadLetter[], nextAfter: string | undefined): { readonly rows: DeadLetterRowWithPayload[]; readonly nextAfter: string | undefined } {
  const rows: DeadLetterRowWithPayload[] = [];
  let bytes = 0;
  for (const letter of letters) {
    const { event } = letter.queued;
    const row = { ...toDeadLetterRow({ ...letter, eventId: publicEventIdOf(letter.queued) }), type: event.type, payload: new RawJson(event.payload_json) };
    bytes += answerBytesOf(row);
    if (rows.length > 0 && bytes > MAX_PAYLOAD_PAGE_BYTES) return { rows, nextAfter: letters[rows.length - 1]?.position };
    rows.push(row);
  }
  return { rows, nextAfter };
}

/**
 * Reads the query of `GET /v1/dead-letters`: `subscription_id`, then `limit` and `cursor`. A cursor
 * given out for another subscription is refused (`invalid_request` on `cursor`): it would page
 * through a list the request did not name.
 */
export function parseDeadLettersQuery(query: Readonly<Record<string, string | undefined>> | undefined): Parsed<DeadLettersQuery> {
  const subscriptionId = parseWith(subscriptionIdSchema, query?.subscription_id ?? '', 'Name the subscription: ?subscription_id=…', ['subscription_id']);
  if (!subscriptionId.ok) return subscriptionId;
  const include = query?.include;
  if (include !== undefined && include !== 'payload') return invalidQuery('include', 'must be payload, or left out', 'The query parameters are not valid.');
  const withPayloads = include === 'payload';
  const page = parsePageQuery(withPayloads && query?.limit === undefined ? { ...query, limit: String(MAX_PAYLOAD_PAGE_LIMIT) } : query, deadLetterPositionSchema);
  if (!page.ok) return page;
  const { after, limit } = page.value;
  if (withPayloads && limit > MAX_PAYLOAD_PAGE_LIMIT) return invalidQuery('limit', `must be at most ${MAX_PAYLOAD_PAGE_LIMIT} with include=payload`);
  if (after !== undefined && after.subscription_id !== subscriptionId.value) {
    return invalidQuery('cursor', 'belongs to another subscription; start again without it');
  }
  return { ok: true, value: { subscriptionId: subscriptionId.value, after: after?.position, limit, withPayloads } };
}

function invalidQuery(path: string, message: string, summary = 'The paging parameters are not valid.'): Parsed<never> {
  return { ok: false, refusal: { code: ErrorCode.invalidRequest, message: summary, details: [{ path, message }] } };
}

/** The cursor of the page of a subscription's dead letters after `position`: null when there is none. */
export function toDeadLettersCursor(subscriptionId: string, position: string | undefined): string | null {
  return position === undefined ? null : encodeCursor({ list: 'dead_letters', subscription_id: subscriptionId, position });
}
