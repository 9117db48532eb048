/**
 * Holding and letting go the groups of a paused subscription. The consumer holds a group by its
 * head's visibility (see `processBatch`) and records the head's receipt handle on the group's
 * item; resume lets each held group go by that handle. The two run concurrently, so each side
 * checks after its own steps what the other may have done meanwhile:
 *
 * - the consumer first records the hold (W), then applies it (V: the head's visibility), then
 *   reads the subscription again, strongly (R): still paused, the hold stands; resumed meanwhile,
 *   it lets the group go itself (and forgets the record: its own V is behind it);
 * - resume first ends the pause (E), then reads the recorded holds (L) and lets each go (G).
 *
 * L reads the groups' items strongly consistent: for a subscription ordered by subscription, its
 * key's one group directly; ordered by resource, the groups of the index of active groups, which is
 * eventually consistent, but a held group has been in it since its first events were accepted, and
 * never leaves it while held.
 *
 * Whichever order these land in, the group is let go after its hold was applied: if L saw the
 * hold, either G came after V, or G came before V and then E < G < V < R, so R sees the resume;
 * if L missed the hold, E < L < W < R, and R sees the resume. A hold that could not be recorded is
 * applied short ({@link UNRECORDED_HOLD_SECONDS}), so that it is made again, and recorded, soon.
 *
 * A consumer can die between V and R (or fail to read in R). Its hold must then stay recorded for
 * someone else to let go, even if a resume's G came before that V: so resume and the lag job let
 * go every hold they find, but forget only one made longer ago than the consumer's timeout, when
 * no V of it can still come (Lambda stops an invocation at its timeout). The lag job, every
 * minute, lets go and in time forgets each recorded hold of a subscription no longer paused
 * ({@link letGoStaleHolds}). Letting go twice is harmless: SQS refuses a handle whose message was
 * received again since, or deleted, and any refusal means the hold is over; a head let go before
 * its hold was applied was not attempted, and is held or delivered by its next receive as the
 * pause then stands.
 *
 * A hold's record goes only by its own handle (`forgetHold`) or by a write of a batch that
 * delivered everything it held of the group (the group stays locked until that batch ends, so no
 * later hold can be overwritten); a failing head's write keeps it, since it can land after the
 * head's backoff let another batch hold the group anew.
 */
import { publicEventIdOfDelivery } from './fan-out-id.js';
import type { VisibilityChange } from './consumer-batch.js';
import { OutcomeKind, type DeliveryOutcome } from './delivery.js';
import { HeadState, type GroupHold, type GroupLag, type GroupProgress } from './lag.js';

/**
 * How long a head stays invisible when its hold could not be recorded: without the receipt
 * handle on the group's item, resume cannot let it go, so the hold is kept short and is made again
 * (and recorded then) at the next receive.
 */
export const UNRECORDED_HOLD_SECONDS = 60;

/** A held group, as the consumer recorded it and resume finds it on its item. */
export interface RecordedHold {
  readonly messageGroupId: string;
  readonly hold: GroupHold;
}

export interface HoldPorts {
  /** Whether the subscription is paused now, read strongly consistent. */
  readonly isPaused: (subscriptionId: string) => Promise<boolean>;
  /** Lets held heads go (visibility 0); a handle SQS refuses counts as let go already. How many SQS took. */
  readonly letGo: (receiptHandles: readonly string[]) => Promise<number>;
  /** Forgets a hold on its group's item, unless a later hold (another handle) replaced it. */
  readonly forgetHold: (messageGroupId: string, receiptHandle: string) => Promise<void>;
}

/** Each hold whose subscription is not paused now (one strong read per subscription). */
async function ofResumed(holds: readonly RecordedHold[], ports: Pick<HoldPorts, 'isPaused'>): Promise<RecordedHold[]> {
  const subscriptions = [...new Set(holds.map(({ hold }) => hold.subscriptionId))];
  const paused = new Map(await Promise.all(subscriptions.map(async (id) => [id, await ports.isPaused(id)] as const)));
  return holds.filter(({ hold }) => paused.get(hold.subscriptionId) === false);
}

/**
 * The consumer's last step for the holds it recorded and applied: each whose subscription was
 * resumed meanwhile is let go at once and forgotten (see the module's comment). How many SQS let go.
 */
export async function confirmHolds(holds: readonly RecordedHold[], ports: HoldPorts): Promise<number> {
  // Its own holds: their V is behind this invocation, so they may be forgotten at once.
  return letGoAll(await ofResumed(holds, ports), ports, { forgetMadeBefore: undefined });
}

/** What the end of a consumer batch needs (see {@link endBatch}); each step reports its own failure, none throws. */
export interface BatchEndPorts {
  /** Records a group's lag; false when it could not be recorded. */
  readonly recordProgress: (progress: GroupProgress) => Promise<boolean>;
  /** Applies the batch's visibility changes. */
  readonly changeVisibility: (changes: readonly VisibilityChange[]) => Promise<void>;
  /** Confirms the holds it recorded and applied ({@link confirmHolds}), reporting a failure (the holds then stand for the lag job). */
  readonly confirmHolds: (holds: readonly RecordedHold[]) => Promise<void>;
}

/** What {@link endBatch} did with the batch's holds. */
export interface BatchEnd {
  readonly holds: readonly RecordedHold[];
  /** Holds whose record failed: applied for {@link UNRECORDED_HOLD_SECONDS} only. */
  readonly unrecorded: number;
}

/**
 * The consumer's steps after a batch, in the order the argument above needs: the lag of each held
 * group (its hold's record, W) first, then the visibility changes (V: a hold whose record failed
 * is applied short), then the other groups' lag, then the subscriptions of the holds read again
 * (R) and any resumed meanwhile let go.
 */
export async function endBatch(progresses: readonly GroupProgress[], visibilityChanges: readonly VisibilityChange[], ports: BatchEndPorts): Promise<BatchEnd> {
  const holds: RecordedHold[] = [];
  const unrecorded = new Set<string>();
  await Promise.all(
    progresses.map(async (progress) => {
      const { head } = progress;
      if (head.state !== HeadState.held) return;
      if (await ports.recordProgress(progress)) holds.push({ messageGroupId: progress.messageGroupId, hold: head.hold });
      else unrecorded.add(head.hold.receiptHandle);
    }),
  );
  await ports.changeVisibility(
    visibilityChanges.map((change) =>
      unrecorded.has(change.receiptHandle) && change.timeoutSeconds > UNRECORDED_HOLD_SECONDS ? { ...change, timeoutSeconds: UNRECORDED_HOLD_SECONDS } : change,
    ),
  );
  await Promise.all(progresses.filter((progress) => progress.head.state !== HeadState.held).map(ports.recordProgress));
  if (holds.length > 0) await ports.confirmHolds(holds);
  return { holds, unrecorded: unrecorded.size };
}

/**
 * The lag job's sweep: every recorded hold of a subscription no longer paused is let go, whatever
 * left it, and forgotten once made before `forgetMadeBefore` (see the module's comment). How many
 * SQS let go.
 */
export async function letGoStaleHolds(groups: readonly GroupLag[], ports: HoldPorts, forgetMadeBefore: string): Promise<number> {
  const holds = groups.flatMap(({ messageGroupId, hold }) => (hold === undefined ? [] : [{ messageGroupId, hold }]));
  return holds.length === 0 ? 0 : letGoAll(await ofResumed(holds, ports), ports, { forgetMadeBefore });
}

/**
 * The time before which a hold was made by a consumer invocation that has surely ended: `now`
 * less the consumer's timeout, and a second for clocks.
 */
export function holdsSettledBefore(now: Date, consumerTimeoutSeconds: number): string {
  return new Date(now.getTime() - (consumerTimeoutSeconds + 1) * 1000).toISOString();
}

/** Holds let go and forgotten at a time: ten SQS batch calls side by side, then as many writes. */
export const HOLDS_PER_STEP = 100;

/**
 * Lets every hold go, then forgets on its group's item each made before `forgetMadeBefore`
 * (undefined: all of them, for the consumer's own), {@link HOLDS_PER_STEP} at a time, so that a
 * run cut short by its time limit keeps what it did and the next one goes on from there. How many
 * SQS let go now.
 */
export async function letGoAll(holds: readonly RecordedHold[], ports: Pick<HoldPorts, 'letGo' | 'forgetHold'>, { forgetMadeBefore }: { readonly forgetMadeBefore: string | undefined }): Promise<number> {
  let released = 0;
  for (let start = 0; start < holds.length; start += HOLDS_PER_STEP) {
    const step = holds.slice(start, start + HOLDS_PER_STEP);
    released += await ports.letGo(step.map(({ hold }) => hold.receiptHandle));
    // Only once SQS has them back: a hold forgotten first and then not let go would be lost. One
    // made by an invocation that may still apply it stays, for the lag job to let go again later.
    const settled = forgetMadeBefore === undefined ? step : step.filter(({ hold }) => hold.heldAt < forgetMadeBefore);
    await Promise.all(settled.map(({ messageGroupId, hold }) => ports.forgetHold(messageGroupId, hold.receiptHandle)));
  }
  return released;
}

/** The kind of notice an automatic pause publishes (the notice topic's `notice` attribute). */
export const AUTO_PAUSE_NOTICE = 'subscription_auto_paused';

/**
 * The notice of an automatic pause, as published on the notice topic and logged: ids, times and
 * the reason the endpoint gave (a status, a timeout), never an event's payload or ordering key.
 */
export interface PauseNotice {
  readonly notice: typeof AUTO_PAUSE_NOTICE;
  readonly subscription_id: string;
  /** The group held at the head that made the pause: the one key's group, or its partition's. */
  readonly message_group_id: string;
  /** The head that was not given up; it waits for the resume, with its number and attempts. */
  readonly event_id: string;
  readonly attempts: number;
  /** Since when the key had been failing, without a delivery. */
  readonly failing_since: string;
  readonly paused_at: string;
  /** The subscription's `pause_reason`: `auto: failing since …; <the last failure>`. */
  readonly pause_reason: string;
}

/**
 * The notices of the automatic pauses a batch made, one per subscription it paused (not one that
 * was paused already: a notice per pause, not per key that met it).
 */
export function pauseNoticesOf(outcomes: Iterable<readonly [messageGroupId: string, outcome: DeliveryOutcome]>): PauseNotice[] {
  const notices = new Map<string, PauseNotice>();
  for (const [messageGroupId, outcome] of outcomes) {
    if (outcome.kind !== OutcomeKind.paused || !outcome.isNewPause || notices.has(outcome.subscriptionId)) continue;
    notices.set(outcome.subscriptionId, {
      notice: AUTO_PAUSE_NOTICE,
      subscription_id: outcome.subscriptionId,
      message_group_id: messageGroupId,
      // The id the API and the receiver know it by, not the one of its scope inside the service.
      event_id: publicEventIdOfDelivery(outcome.eventId),
      attempts: outcome.attempts,
      failing_since: outcome.failingSince,
      paused_at: outcome.pause.pausedAt,
      pause_reason: outcome.pause.reason,
    });
  }
  return [...notices.values()];
}
