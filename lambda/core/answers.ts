/**
 * The bodies of the API's successful answers (docs/api.md#routes), as zod schemas: the handlers build
 * values of these types, and the API document is generated from these schemas, so the two cannot
 * drift apart. Rows that have a type of their own elsewhere (a lag row, a dead letter's row, an
 * event's result) are checked against it where they are declared.
 */
import * as z from 'zod';
import type { BackstopImportStep } from './backstop-import.js';
import { deadLetterRowSchema } from './dead-letter.js';
import { webhookEventSchema } from './event.js';
import { eventResultSchema } from './ingest.js';
import { lagRowSchema } from './lag.js';
import { ORDERING_CHANGE_HOLD_SECONDS, ORDERING_CHANGE_WAIT_SECONDS, ORDERING_CHANGE_WINDOW_SECONDS, type OrderingChangeMark } from './ordering-change.js';
import type { Ordering } from './routing.js';
import { MAX_METRICS_MINUTES, METRICS_PERIOD_SECONDS, MetricsSourceName, type MetricsAnswer, type MetricsPoint } from './metrics.js';
import { batchSizeSchema, eventTypesSchema, orderingSchema } from './subscription.js';
import type { RedriveStep } from './redrive.js';
import { secretSchema } from './secret.js';
import type { RawJson } from './raw-json.js';
import { schemaOf, type Output } from './schema-match.js';

/** The cursor of the next page; null on the last one. */
const nextCursorSchema = z.string().nullable();

/** `GET /health`: the service accepts events. */
export const healthAnswerSchema = z.strictObject({ status: z.literal('ok') });
export type HealthAnswer = Output<typeof healthAnswerSchema>;

/** A subscription's delivery settings as stored: given, kept from before, or the defaults. */
const subscriptionSettingsShape = {
  batch_size: batchSizeSchema.meta({ description: 'The most events of one ordering key in one POST.' }),
  ordering: orderingSchema.meta({ description: 'What is ordered: the subscription (its id is the key), or each of its resources (the key is the subscription and the event\'s `resource_id`).' }),
  event_types: eventTypesSchema.nullable().meta({ description: 'The event types a fan-out to its tenant delivers to it; null: every type.' }),
};

/**
 * `PUT /v1/subscriptions/{subscription_id}`: the subscription as created or replaced. `secret` only
 * when this PUT generated it (a creation without one): a secret that was given or kept is never
 * answered, so reading a secret stays `GET …/secret`, a route of its own that IAM grants apart.
 */
export const subscriptionPutAnswerSchema = z.strictObject({
  subscription_id: z.string(),
  tenant_id: z.string(),
  url: z.string(),
  secret: secretSchema.optional().meta({ description: 'The secret this PUT generated (a creation without `secret`); absent when a secret was given or kept: read it with `GET /v1/subscriptions/{subscription_id}/secret`.' }),
  ...subscriptionSettingsShape,
});
export type SubscriptionPutAnswer = Output<typeof subscriptionPutAnswerSchema>;

/** Whether a subscription is paused, since when and why (see `POST /v1/subscriptions/{subscription_id}/pause`). */
const subscriptionPauseShape = {
  is_paused: z.boolean().meta({ description: 'True while the subscription is paused: nothing of it is attempted, its events are accepted and wait in order.' }),
  paused_at: z.iso.datetime().nullable().meta({ description: 'When the pause in force began; null while not paused.' }),
  pause_reason: z.string().nullable().meta({ description: 'Why it is paused: the reason an operator gave, or for an automatic pause (AUTO_PAUSE_AFTER_SECONDS) "auto: failing since <time>; <how the head’s last round of attempts ended>". Null while not paused.' }),
};

/** A replay as `GET /v1/subscriptions/{subscription_id}` shows it (see `POST …/replay`). */
const replayViewSchema = z.strictObject({
  since: z.iso.datetime(),
  until: z.iso.datetime(),
  started_at: z.iso.datetime(),
  reached: z.iso.datetime().nullable(),
  replayed: z.number().int().nonnegative(),
  dead_lettered: z.number().int().nonnegative(),
  not_delivered: z.number().int().nonnegative(),
  cancelled_at: z.iso.datetime().nullable().meta({ description: 'When it was cancelled (`DELETE …/replay`); null for one under way or done.' }),
});
export type ReplayView = Output<typeof replayViewSchema>;

/** `GET /v1/subscriptions/{subscription_id}`: the subscription, never its secret. */
export const subscriptionAnswerSchema = z.strictObject({
  subscription_id: z.string(),
  tenant_id: z.string(),
  url: z.string(),
  ...subscriptionSettingsShape,
  created_at: z.iso.datetime(),
  ...subscriptionPauseShape,
  replay: replayViewSchema.nullable().meta({ description: 'The replay under way (`POST …/replay`), as it stands; null when none is.' }),
  last_replay: replayViewSchema.nullable().meta({ description: 'The last replay that ended (done or cancelled); null when none did.' }),
  parked_groups: z.number().int().nonnegative().meta({
    description:
      'Message groups with events of this subscription parked (PAUSE_EVACUATION=store: a group held for a pause past HELD_AGE_ALARM_SECONDS is moved out of the queue into the store of dead letters, in order) or still being sent back after a resume; 0 when none.',
  }),
  last_delivered_at: z.iso.datetime().nullable().meta({
    description:
      'When an event of the subscription was last delivered (the end of the consumer\'s batch that delivered it), for a subscription ordered by subscription under one message group per key; null before its first delivery, and for a subscription ordered by resource or under partitioned routing, where no one group holds exactly its events (the lag view shows each group\'s `last_delivered_at`).',
  }),
  ordering_change: z
    .strictObject({ ordering: orderingSchema, started_at: z.iso.datetime() })
    .nullable()
    .meta({
      description:
        `A change of \`ordering\` begun by a PUT and not yet made: while it is shown, \`POST /v1/events\` answers the subscription's events 503 \`ingest_paused\`, and its replays and redrives are refused 409 \`ingest_paused\`. ` +
        `The same PUT repeated ${ORDERING_CHANGE_WAIT_SECONDS} s to ${ORDERING_CHANGE_WINDOW_SECONDS} s after \`started_at\` makes the change (or is refused, lifting it, when events are pending); a PUT naming the ordering in force gives it up; ` +
        `unmade, it stops holding events ${ORDERING_CHANGE_HOLD_SECONDS} s after \`started_at\`. Null when none is under way.`,
    }),
});
export type SubscriptionAnswer = Output<typeof subscriptionAnswerSchema>;

/** `POST /v1/subscriptions/{subscription_id}/ordering-change`: the change begun, and when the PUT that makes it may come. */
export const orderingChangeAnswerSchema = z.strictObject({
  subscription_id: z.string(),
  ordering: orderingSchema.meta({ description: 'The ordering in force until the change is made.' }),
  ordering_change: z.strictObject({ ordering: orderingSchema, started_at: z.iso.datetime() }),
  make_after: z.iso.datetime().meta({ description: 'From when a PUT with the new `ordering` makes the change (`Retry-After` counts down to it).' }),
  make_before: z.iso.datetime().meta({ description: 'Until when it does; later, the change is to be begun again.' }),
});
export type OrderingChangeAnswer = Output<typeof orderingChangeAnswerSchema>;

/** The answer of a change begun at `mark.startedAt`, to be made `waitSeconds` later and within ORDERING_CHANGE_WINDOW_SECONDS. */
export function orderingChangeAnswerOf(subscriptionId: string, inForce: Ordering, mark: OrderingChangeMark, waitSeconds: number): OrderingChangeAnswer {
  const started = Date.parse(mark.startedAt);
  return {
    subscription_id: subscriptionId,
    ordering: inForce,
    ordering_change: { ordering: mark.ordering, started_at: mark.startedAt },
    make_after: new Date(started + waitSeconds * 1000).toISOString(),
    make_before: new Date(started + ORDERING_CHANGE_WINDOW_SECONDS * 1000).toISOString(),
  };
}

/**
 * `GET /v1/subscriptions/{subscription_id}/secret`: the secrets that sign now, the one route that
 * answers a stored secret. The previous secret and the end of its grace only during a rotation's grace.
 */
export const subscriptionSecretAnswerSchema = z.strictObject({
  secret: secretSchema.meta({ description: 'The secret that signs every webhook.' }),
  previous_secret: secretSchema.optional().meta({ description: 'During a rotation\'s grace only: the secret before it, which still signs beside `secret`.' }),
  previous_secret_expires_at: z.iso.datetime().optional().meta({ description: 'During a rotation\'s grace only: when `previous_secret` stops signing.' }),
});
export type SubscriptionSecretAnswer = Output<typeof subscriptionSecretAnswerSchema>;

/** `GET /v1/subscriptions?tenant_id=…`: a page of a tenant's subscriptions, in the order of their ids, never a secret. */
export const subscriptionsAnswerSchema = z.strictObject({ items: z.array(subscriptionAnswerSchema), next_cursor: nextCursorSchema });
export type SubscriptionsAnswer = Output<typeof subscriptionsAnswerSchema>;

/** `POST /v1/subscriptions/{subscription_id}/pause`: the subscription's pause as it stands, a pause already in force unchanged. */
export const pauseAnswerSchema = z.strictObject({ subscription_id: z.string(), ...subscriptionPauseShape });
export type PauseAnswer = Output<typeof pauseAnswerSchema>;

/** `POST /v1/subscriptions/{subscription_id}/resume`: not paused any more, and the held groups let go at once. */
export const resumeAnswerSchema = z.strictObject({
  subscription_id: z.string(),
  ...subscriptionPauseShape,
  resumed_at: z.iso.datetime(),
  released_groups: z.number().int().nonnegative().meta({
    description:
      'Message groups the consumer held for the pause and that SQS let go now: their heads are delivered within seconds. A group being held while the resume ran is let go by the consumer that holds it, or by the lag job within a minute.',
  }),
  unparked_events: z.number().int().nonnegative().meta({
    description:
      'Parked events (see `parked_groups` of `GET /v1/subscriptions/{subscription_id}`) sent back into their groups by this call, before any later event of their keys; the lag job sends the rest, every minute.',
  }),
});
export type ResumeAnswer = Output<typeof resumeAnswerSchema>;

/** `POST /v1/events` answered `202`: one result per event, in request order. */
export const eventsAnswerSchema = z.strictObject({ results: z.array(eventResultSchema) });
export type EventsAnswer = Output<typeof eventsAnswerSchema>;

/** `GET /v1/lag`: one page of the lag view, worst first. */
export const lagAnswerSchema = z.strictObject({ groups: z.array(lagRowSchema), next_cursor: nextCursorSchema });
export type LagAnswer = Output<typeof lagAnswerSchema>;

/** `GET /v1/groups/{message_group_id}`: one group's row of the lag view, also when it has drained. */
export const groupAnswerSchema = z.strictObject({ group: lagRowSchema });
export type GroupAnswer = Output<typeof groupAnswerSchema>;
const count = z.number().int().nonnegative();

/** One minute of `GET /v1/metrics`. */
const metricsPointSchema = schemaOf<MetricsPoint>()(
  z.strictObject({
    at: z.iso.datetime().meta({ description: 'The minute’s start.' }),
    delivered: count.meta({ description: 'Events a receiver accepted in the minute.' }),
    failed_attempts: count.meta({ description: 'Attempts a receiver refused, or that got no answer in time, in the minute.' }),
    dead_lettered: count.meta({ description: 'Events given up (dead-lettered) in the minute.' }),
  }),
);

/** `GET /v1/metrics`: the consumer's counts per minute and the lag figures now, for the console's overview. */
export const metricsAnswerSchema = schemaOf<MetricsAnswer>()(
  z.strictObject({
    minutes: z.number().int().min(1).max(MAX_METRICS_MINUTES).meta({ description: 'Minutes of the series, as asked.' }),
    period_seconds: z.literal(METRICS_PERIOD_SECONDS).meta({ description: 'Seconds of each point.' }),
    points: z.array(metricsPointSchema).meta({ description: 'One point per whole minute, oldest first, exactly `minutes` of them; the last is the current minute, so far. A minute with no data is zeros.' }),
    stalled_groups: count.meta({ description: 'Groups whose head has been failing for longer than STALL_THRESHOLD_SECONDS, now.' }),
    max_oldest_wait_seconds: count.meta({ description: 'The longest any pending event has waited since it was accepted, now.' }),
    backlog: count.meta({ description: 'Pending events over all groups, now.' }),
    held_groups: count.meta({ description: 'Groups held for paused subscriptions, now.' }),
    falling_behind_keys: count.meta({ description: 'Keys falling behind (`is_falling_behind` of `GET /v1/lag`), now.' }),
    source: z.enum([MetricsSourceName.cloudwatch, MetricsSourceName.local]).meta({ description: 'Where the series come from: CloudWatch (deployed) or the local stack’s recorder.' }),
  }),
);

/** `GET /v1/dead-letters`: one page of a subscription's dead letters, oldest first. */
export const deadLettersAnswerSchema = z.strictObject({
  items: z.array(
    deadLetterRowSchema.extend({
      type: webhookEventSchema.shape.type.optional().meta({ description: 'The event\'s type: with `include=payload` only.' }),
      payload: webhookEventSchema.shape.payload.optional().meta({ type: 'object', description: 'The event\'s payload, its JSON text exactly as it was posted: with `include=payload` only. Never logged.' }),
    }),
  ),
  next_cursor: nextCursorSchema,
});
export type DeadLettersAnswer = Output<typeof deadLettersAnswerSchema>;

/**
 * {@link DeadLettersAnswer} as the route builds it: each payload as its text (`RawJson`), which
 * the answer's writer puts in as it is, so that the wire holds the object {@link DeadLettersAnswer}
 * describes, as it was posted.
 */
export type DeadLettersAnswerOfTexts = Omit<DeadLettersAnswer, 'items'> & {
  readonly items: readonly (Omit<DeadLettersAnswer['items'][number], 'payload'> & { readonly payload?: RawJson })[];
};

/** `POST /v1/dead-letters/redrive`: one step of the redrive; the operator repeats until `is_done`. */
export const redriveAnswerSchema = z.strictObject({
  subscription_id: z.string(),
  redriven: z.array(
    schemaOf<RedriveStep['redriven'][number]>()(z.strictObject({ event_id: z.string(), sequence: z.number().int().positive().nullable() })),
  ),
  remaining: z.number().int().nonnegative(),
  is_done: z.boolean(),
});
export type RedriveAnswer = Output<typeof redriveAnswerSchema>;

/** `POST /v1/subscriptions/{subscription_id}/replay`: the replay as it stands after this call's step. */
export const replayAnswerSchema = z.strictObject({
  subscription_id: z.string(),
  since: z.iso.datetime().meta({ description: 'Start of the window of acceptance times, inclusive.' }),
  until: z.iso.datetime().meta({ description: 'End of the window, inclusive.' }),
  started_at: z.iso.datetime().meta({ description: 'When this replay started: it names the replay (its copies\' deduplication ids derive from it).' }),
  reached: z.iso.datetime().nullable().meta({ description: 'The acceptance time the replay has read up to (`until` once done); null before its first page.' }),
  replayed: z.number().int().nonnegative().meta({ description: 'Events sent again so far, each with its original `webhook-id` and `webhook-sequence`, marked `webhook-redelivery: true`.' }),
  dead_lettered: z.number().int().nonnegative().meta({ description: 'Events of the window that are dead letters: not replayed, a redrive sends them.' }),
  not_delivered: z.number().int().nonnegative().meta({ description: 'Events of the window not replayed for want of a known delivery: still queued (still to come), or delivered in a run whose numbers were not kept (before EVENT_RETENTION_DAYS was on).' }),
  is_done: z.boolean().meta({ description: 'True once the whole window was sent; until then, call again with the same window (another caller may be stepping it meanwhile: its state is answered).' }),
});
export type ReplayAnswer = Output<typeof replayAnswerSchema>;

/** `DELETE /v1/subscriptions/{subscription_id}/replay`: the replay cancelled, as it stood. */
export const replayCancelAnswerSchema = replayAnswerSchema.extend({
  cancelled_at: z.iso.datetime().meta({ description: 'When it was cancelled. What it sent stays sent; a step under way ends its pass.' }),
});
export type ReplayCancelAnswer = Output<typeof replayCancelAnswerSchema>;

/** `POST /v1/dead-letters/import`: one step of the import of SQS's backstop queue. */
export const importAnswerSchema = z.strictObject({
  imported: z.array(
    schemaOf<BackstopImportStep['imported'][number]>()(
      z.strictObject({ event_id: z.string(), subscription_id: z.string(), sequence: z.number().int().positive().nullable() }),
    ),
  ),
  unreadable: z.number().int().nonnegative(),
  is_done: z.boolean(),
});
export type ImportAnswer = Output<typeof importAnswerSchema>;

/** `POST /v1/groups/{message_group_id}/skip` answered `202`: the head is dead-lettered at its next retry. */
export const skipAnswerSchema = z.strictObject({
  message_group_id: z.string(),
  event_id: z.string(),
  status: z.literal('skip_requested'),
});
export type SkipAnswer = Output<typeof skipAnswerSchema>;
