/**
 * The answers of the HTTP API (docs/api.md#routes, the operations routes included), validated before use:
 * an answer of another shape is reported, never cast. Objects are loose, so that fields the
 * API adds later pass through to `--json` output.
 */
import * as z from 'zod';

/** The contract's error body: `{"error": {"code", "message", "details"?}}`. */
export const errorBodySchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }),
});

/** One message group of `GET /v1/lag`. */
export const lagRowSchema = z.looseObject({
  message_group_id: z.string(),
  depth: z.number(),
  oldest_wait_seconds: z.number(),
  keys_affected: z.number(),
  head_attempts: z.number(),
  last_error: z.string().nullable(),
  /** Added after the contract's first version: absent from an older API. */
  dead_lettered: z.number().optional(),
  /** The group's ordering key; null when not one key (partition mode) or not known, absent from an older API. */
  ordering_key: z.string().nullable().optional(),
  /** The group's events accepted and delivered in the last full minute; absent from an older API. */
  accepted_per_minute: z.number().optional(),
  delivered_per_minute: z.number().optional(),
  /** Whether the group's key is falling behind (fed at least as fast as it delivers); absent from an older API. */
  is_falling_behind: z.boolean().optional(),
  /** Whether the group is held for a paused subscription; absent from an older API. */
  is_paused: z.boolean().optional(),
  held_subscription_id: z.string().nullable().optional(),
});
export type LagRow = z.infer<typeof lagRowSchema>;

/** One page of `GET /v1/lag`; `next_cursor` is null on the last page, and absent from an API older than paging. */
export const lagAnswerSchema = z.looseObject({ groups: z.array(lagRowSchema), next_cursor: z.string().nullable().optional() });
export type LagAnswer = z.infer<typeof lagAnswerSchema>;

/** One event of `GET /v1/dead-letters`. */
export const deadLetterSchema = z.looseObject({
  event_id: z.string(),
  subscription_id: z.string(),
  message_group_id: z.string(),
  /** null for an event SQS's backstop moved before it had a sequence. */
  sequence: z.number().nullable(),
  attempts: z.number(),
  reason: z.string(),
  dead_lettered_at: z.string(),
});
export type DeadLetter = z.infer<typeof deadLetterSchema>;

/** One page of `GET /v1/dead-letters`; `next_cursor` is null on the last page, and absent from an API older than paging. */
export const deadLettersAnswerSchema = z.looseObject({ items: z.array(deadLetterSchema), next_cursor: z.string().nullable().optional() });
export type DeadLettersAnswer = z.infer<typeof deadLettersAnswerSchema>;

/** One answer of `POST /v1/dead-letters/redrive`: a page of re-enqueued events and what is left. */
export const redriveAnswerSchema = z.looseObject({
  subscription_id: z.string(),
  /** `sequence` is null for an event SQS's own backstop dead-lettered before it had one. */
  redriven: z.array(z.looseObject({ event_id: z.string(), sequence: z.number().nullable() })),
  remaining: z.number(),
  is_done: z.boolean(),
});
export type RedriveAnswer = z.infer<typeof redriveAnswerSchema>;

/** One answer of `POST /v1/subscriptions/{id}/replay`: the replay as it stands after a step. */
export const replayAnswerSchema = z.looseObject({
  subscription_id: z.string(),
  since: z.string(),
  until: z.string(),
  started_at: z.string(),
  /** How far into the window the replay has read; null before its first page. */
  reached: z.string().nullable(),
  replayed: z.number(),
  dead_lettered: z.number(),
  not_delivered: z.number(),
  is_done: z.boolean(),
});
export type ReplayAnswer = z.infer<typeof replayAnswerSchema>;

/** The answer of `DELETE /v1/subscriptions/{id}/replay`: the replay cancelled, as it stood. */
export const replayCancelAnswerSchema = replayAnswerSchema.extend({ cancelled_at: z.string() });

/** One answer of `POST /v1/dead-letters/import`: the events a step moved from the backstop queue into the store. */
export const importAnswerSchema = z.looseObject({
  /** `sequence` is null for an event that was not its key's head when SQS moved it. */
  imported: z.array(z.looseObject({ event_id: z.string(), subscription_id: z.string(), sequence: z.number().nullable() })),
  /** Records of the backstop queue this step found that are no event: they stay there. */
  unreadable: z.number(),
  is_done: z.boolean(),
});
export type ImportAnswer = z.infer<typeof importAnswerSchema>;

/** The answer of `POST /v1/groups/{message_group_id}/skip`. */
export const skipAnswerSchema = z.looseObject({
  message_group_id: z.string(),
  event_id: z.string(),
  status: z.literal('skip_requested'),
});
export type SkipAnswer = z.infer<typeof skipAnswerSchema>;

/** The versioned routing setting and what is still pending under it (`/v1/routing`). */
export const routingSchema = z.looseObject({
  version: z.number(),
  /** null: one message group per ordering key. */
  partition_count: z.number().nullable(),
  is_paused: z.boolean(),
  /** When ingest was paused; null while it is not. */
  paused_at: z.string().nullable().optional(),
  pending: z.looseObject({
    queued: z.number(),
    in_flight: z.number(),
    delayed: z.number(),
    groups_with_pending: z.number(),
  }),
});
export type Routing = z.infer<typeof routingSchema>;

/**
 * The answer of `POST /v1/subscriptions/{subscription_id}/secret/rotate`: the new secret only when
 * the rotation generated it (not one the request gave), never the previous one.
 */
export const rotateSecretAnswerSchema = z.looseObject({
  subscription_id: z.string(),
  secret: z.string().optional(),
  previous_secret_expires_at: z.string(),
});
export type RotateSecretAnswer = z.infer<typeof rotateSecretAnswerSchema>;

/**
 * The answer of `GET /v1/subscriptions/{subscription_id}/secret`: the secret in force and, during a
 * rotation's grace, the previous one with the end of its grace.
 */
export const subscriptionSecretAnswerSchema = z.looseObject({
  secret: z.string(),
  previous_secret: z.string().optional(),
  previous_secret_expires_at: z.string().optional(),
});
export type SubscriptionSecretAnswer = z.infer<typeof subscriptionSecretAnswerSchema>;

/** The answer of `POST /v1/subscriptions/{subscription_id}/pause`: the pause in force. */
export const pauseAnswerSchema = z.looseObject({
  subscription_id: z.string(),
  is_paused: z.boolean(),
  paused_at: z.string().nullable(),
  pause_reason: z.string().nullable(),
});
export type PauseAnswer = z.infer<typeof pauseAnswerSchema>;

/** The answer of `POST /v1/subscriptions/{subscription_id}/resume`. */
export const resumeAnswerSchema = z.looseObject({
  subscription_id: z.string(),
  is_paused: z.boolean(),
  resumed_at: z.string(),
  released_groups: z.number().int().nonnegative(),
  /** Parked events sent back by this call (absent from a server older than parking). */
  unparked_events: z.number().int().nonnegative().optional(),
});
export type ResumeAnswer = z.infer<typeof resumeAnswerSchema>;

/** The answer of `GET /v1/subscriptions/{subscription_id}` (no secret). */
export const subscriptionSchema = z.looseObject({
  subscription_id: z.string(),
  tenant_id: z.string(),
  url: z.string(),
});
export type Subscription = z.infer<typeof subscriptionSchema>;
