/**
 * `replay`: sends again a subscription's events accepted in a window, per key in their original
 * order, with their original ids and sequence numbers, marked as redeliveries. Each
 * `POST /v1/subscriptions/{id}/replay` does a bounded step; the command repeats it, always with the
 * same window, until the API answers `is_done`, with a bar of how far into the window it is.
 */
import { replayAnswerSchema, replayCancelAnswerSchema, type ReplayAnswer } from '../api/schemas.js';
import { connect, type Command } from '../command.js';
import { formatMs, parseDurationMs } from '../duration.js';
import { TimedOutError, UsageError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { COMMON_OPTIONS, INTERVAL_OPTION, durationOption, intervalOption, parseOptions, requireOption } from '../options.js';
import { createProgressBar, createSpinner } from '../output/progress.js';
import { writeJson, writeLine } from '../output/stream.js';
import { pause } from '../poll.js';

/** How long a replay may run before the command gives up, unless `--timeout` says otherwise. */
export const DEFAULT_REPLAY_TIMEOUT_MS = 30 * 60_000;

const OPTIONS = { ...COMMON_OPTIONS, ...INTERVAL_OPTION, subscription: { type: 'string' }, since: { type: 'string' }, until: { type: 'string' }, timeout: { type: 'string' }, cancel: { type: 'boolean' } } as const;

/** A time as `--since` and `--until` take it: an RFC 3339 time, or a duration ago (`2h`, `90m`). */
export function parseTimeOption(name: string, text: string, nowMs: number): string {
  const agoMs = parseDurationMs(text);
  if (agoMs !== undefined) return new Date(nowMs - agoMs).toISOString();
  const at = Date.parse(text);
  if (/^\d{4}-\d{2}-\d{2}T/.test(text) && !Number.isNaN(at)) return new Date(at).toISOString();
  throw new UsageError(`--${name} must be a time (2026-12-04T10:00:00Z) or a duration ago (2h, 90m), not "${text}"`);
}

export const replayCommand: Command = {
  name: 'replay',
  summary: "send again a subscription's events accepted in a window, in their original order",
  help: `Usage: ordered-webhooks replay --subscription <subscription_id> --since <time|duration> [--until <time|duration>] [--timeout <duration>] [--json]
       ordered-webhooks replay --subscription <subscription_id> --cancel [--json]

Sends again every event of the subscription accepted in the window and delivered, each key's in
its original order, with its original webhook-id and webhook-sequence, marked
webhook-redelivery: true (POST /v1/subscriptions/{id}/replay, repeated until done). Dead letters
of the window are left to redrive; events not delivered yet are still to come. Events are kept
EVENT_RETENTION_DAYS (default 7). Progress goes to stderr; the summary to stdout.

Options:
  --subscription <id>     the subscription (required)
  --since <when>          start of the window: an RFC 3339 time, or a duration ago (2h, 90m) (required)
  --until <when>          end of the window, likewise (default now)
  --timeout <duration>    give up after this long (default ${formatMs(DEFAULT_REPLAY_TIMEOUT_MS)}); exit 5
  --interval <duration>   pause before asking again while another caller steps it (default 2s)
  --cancel                cancel the replay under way (DELETE /v1/subscriptions/{id}/replay); what it sent stays sent`,
  run: async (args, io) => {
    const values = parseOptions(args, OPTIONS);
    const subscriptionId = requireOption('subscription', values.subscription);
    if (values.cancel === true) {
      const cancelled = await connect(values, io).send({ method: 'DELETE', path: `/v1/subscriptions/${encodeURIComponent(subscriptionId)}/replay` }, replayCancelAnswerSchema);
      if (values.json === true) writeJson(io.stdout, cancelled);
      else writeLine(io.stdout, `Cancelled the replay of subscription ${subscriptionId} (${cancelled.since} to ${cancelled.until}) after ${cancelled.replayed} event(s) replayed.`);
      return ExitCode.ok;
    }
    const since = parseTimeOption('since', requireOption('since', values.since), io.clock.now());
    const until = values.until === undefined ? undefined : parseTimeOption('until', values.until, io.clock.now());
    const timeoutMs = durationOption('timeout', values.timeout, DEFAULT_REPLAY_TIMEOUT_MS);
    const intervalMs = intervalOption(values.interval);
    const api = connect(values, io);
    const path = `/v1/subscriptions/${encodeURIComponent(subscriptionId)}/replay`;

    const deadline = io.clock.now() + timeoutMs;
    const label = `Replaying ${subscriptionId}`;
    const firstStep = createSpinner(io.stderr, label, { now: io.clock.now });
    firstStep.update('sending the first step');
    const bar = createProgressBar(io.stderr, label);
    let last: ReplayAnswer | undefined;
    try {
      for (;;) {
        // Every call names the window the first answer fixed: it follows the replay under way.
        const answer: ReplayAnswer = await api.send({ method: 'POST', path, body: { since, until: last?.until ?? until } }, replayAnswerSchema);
        firstStep.finish();
        const { done, total } = windowProgress(answer);
        bar.update(done, total, `${answer.replayed} replayed`);
        const moved = last === undefined || answer.replayed !== last.replayed || answer.reached !== last.reached;
        last = answer;
        if (answer.is_done) break;
        const leftMs = deadline - io.clock.now();
        if (leftMs <= 0) throw new TimedOutError(`Timed out after ${formatMs(timeoutMs)} replaying ${subscriptionId}: ${answer.replayed} event(s) replayed so far; run the command again with --since ${answer.since} --until ${answer.until} to go on.`);
        // Another caller's step holds it: ask again after a pause.
        if (!moved) await pause(io, Math.min(intervalMs, leftMs));
      }
    } catch (error) {
      firstStep.finish();
      bar.finish();
      if (last !== undefined && last.replayed > 0) writeLine(io.stderr, `${last.replayed} event(s) were replayed before this failure; run the command again with --since ${last.since} --until ${last.until} to go on.`);
      throw error;
    }
    bar.finish();
    if (values.json === true) writeJson(io.stdout, last);
    else writeLine(io.stdout, describeReplay(last));
    return ExitCode.ok;
  },
};

/** How far into its window a replay is, in seconds of acceptance time. */
function windowProgress(answer: ReplayAnswer): { done: number; total: number } {
  const since = Date.parse(answer.since);
  const total = Math.max(1, Math.ceil((Date.parse(answer.until) - since) / 1000));
  if (answer.is_done) return { done: total, total };
  const reached = answer.reached === null ? since : Date.parse(answer.reached);
  return { done: Math.min(total, Math.max(0, Math.floor((reached - since) / 1000))), total };
}

function describeReplay(answer: ReplayAnswer): string {
  const left = [
    ...(answer.dead_lettered > 0 ? [`${answer.dead_lettered} dead letter(s) left to redrive`] : []),
    ...(answer.not_delivered > 0 ? [`${answer.not_delivered} not delivered yet`] : []),
  ];
  return `Replayed ${answer.replayed} event(s) of subscription ${answer.subscription_id} accepted from ${answer.since} to ${answer.until}, in their original order${left.length === 0 ? '' : `; ${left.join(', ')}`}.`;
}
