/**
 * `skip`: dead-letters a group's failing head on purpose, so that its key moves on
 * (`POST /v1/groups/{message_group_id}/skip`). The group is given, or resolved from
 * `--subscription` as ingest routes it. `--event` makes the skip conditional on the head still
 * being that event; `--wait` follows the lag view until the head has moved on.
 */
import { pathSegment, type ApiClient } from '../api/client.js';
import { readLag } from '../api/lag.js';
import { requireSubscription } from '../api/subscriptions.js';
import { routingSchema, skipAnswerSchema, type LagRow } from '../api/schemas.js';
import { connect, type Command } from '../command.js';
import { formatMs, formatSeconds } from '../duration.js';
import { TimedOutError, UsageError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { COMMON_OPTIONS, INTERVAL_OPTION, durationOption, intervalOption, parseOptions, requireOption } from '../options.js';
import { createSpinner } from '../output/progress.js';
import { writeJson, writeLine } from '../output/stream.js';
import { pollUntil } from '../poll.js';
import { groupsOfSubscription } from '../routing/message-group.js';

/** How long `--wait` waits for the head to move on, unless `--timeout` says otherwise. */
export const DEFAULT_SKIP_TIMEOUT_MS = 15 * 60_000;

const OPTIONS = {
  ...COMMON_OPTIONS,
  ...INTERVAL_OPTION,
  group: { type: 'string' },
  subscription: { type: 'string' },
  event: { type: 'string' },
  wait: { type: 'boolean' },
  timeout: { type: 'string' },
} as const;

/**
 * Whether the group's head is no longer the one that was failing when the skip was asked for:
 * the group left the lag view, settled an event, dead-lettered one, or its head's attempts
 * started again from zero.
 */
export function hasHeadMovedOn(before: LagRow | undefined, now: LagRow | undefined): boolean {
  if (now === undefined || now.depth === 0) return true;
  // Not failing when the skip was asked for (a race): moved on once no attempt has failed since.
  if (before === undefined) return now.head_attempts === 0;
  if (now.depth < before.depth || now.head_attempts < before.head_attempts) return true;
  return now.dead_lettered !== undefined && before.dead_lettered !== undefined && now.dead_lettered > before.dead_lettered;
}

export const skipCommand: Command = {
  name: 'skip',
  summary: "dead-letter a group's failing head on purpose, so its key moves on",
  help: `Usage: ordered-webhooks skip (--group <message_group_id> | --subscription <subscription_id>) [--event <event_id>] [--wait [--timeout <duration>]] [--json]

Dead-letters the failing head of a message group on purpose, so that its key moves on
(POST /v1/groups/{message_group_id}/skip). The event keeps its sequence number and can be
redriven later. Refused (exit 4) when the group has no failing head (no_failing_head) or, with
--event, when its head is another event now (head_changed).

Options:
  --group <id>            the message group, as the lag view names it
  --subscription <id>     the subscription's group instead, computed as ingest routes it (GET
                          /v1/routing); refused in partition mode, where the partition's head may
                          be another subscription's event: give --group and --event there
  --event <event_id>      skip only if this event is still the head
  --wait                  follow the lag view until the head has moved on
  --timeout <duration>    with --wait: give up after this long (default ${formatMs(DEFAULT_SKIP_TIMEOUT_MS)}); exit 5
  --interval <duration>   with --wait: how often to look (default 2s)`,
  run: async (args, io) => {
    const values = parseOptions(args, OPTIONS);
    if (values.group !== undefined && values.subscription !== undefined) throw new UsageError('Give --group or --subscription, not both.');
    if (values.group === undefined && values.subscription === undefined) throw new UsageError('--group (or --subscription) is required.');
    const timeoutMs = durationOption('timeout', values.timeout, DEFAULT_SKIP_TIMEOUT_MS);
    const intervalMs = intervalOption(values.interval);
    const api = connect(values, io);
    const groupId = values.group === undefined ? await groupOfSubscription(api, requireOption('subscription', values.subscription)) : requireOption('group', values.group);
    const findGroup = async (): Promise<LagRow | undefined> =>
      (await readLag(api)).groups.find((row) => row.message_group_id === groupId);

    // Read before the skip: afterwards the head may already have moved on.
    const before = values.wait === true ? await findGroup() : undefined;
    const answer = await api.send(
      { method: 'POST', path: `/v1/groups/${pathSegment(groupId)}/skip`, body: values.event === undefined ? {} : { event_id: values.event } },
      skipAnswerSchema,
    );
    if (values.json !== true) writeLine(io.stdout, `Skip requested: event ${answer.event_id}, the head of group ${answer.message_group_id}, will be dead-lettered.`);
    if (values.wait !== true) {
      if (values.json === true) writeJson(io.stdout, answer);
      return ExitCode.ok;
    }

    const startedAt = io.clock.now();
    const spinner = createSpinner(io.stderr, `Waiting for group ${groupId} to move past ${answer.event_id}`, { now: io.clock.now });
    let after: LagRow | undefined;
    try {
      after = await pollUntil({
        what: `group ${groupId} to move past event ${answer.event_id}`,
        timeoutMs,
        intervalMs,
        clock: io.clock,
        signal: io.signal,
        check: async () => {
          const row = await findGroup();
          if (hasHeadMovedOn(before, row)) return { row };
          // The spinner shows the time elapsed itself, on every frame.
          spinner.update(`depth ${row?.depth ?? 0}, head attempts ${row?.head_attempts ?? 0}`);
          return undefined;
        },
        onTransientError: (error) => spinner.update(`${error.message} (asking again)`),
      }).then(({ row }) => row);
    } catch (error) {
      spinner.finish();
      if (error instanceof TimedOutError) {
        throw new TimedOutError(`${error.message} The skip was requested; \`ordered-webhooks lag\` shows the group.`);
      }
      throw error;
    }
    spinner.finish();

    if (values.json === true) {
      writeJson(io.stdout, { ...answer, is_head_moved_on: true, group: after ?? null });
    } else {
      const state = after === undefined || after.depth === 0 ? 'has nothing pending' : `has ${after.depth} pending, head attempts ${after.head_attempts}`;
      writeLine(io.stdout, `Group ${groupId} moved past ${answer.event_id} after ${formatSeconds((io.clock.now() - startedAt) / 1_000)}; it ${state}.`);
    }
    return ExitCode.ok;
  },
};

/**
 * The message group of a subscription's key under the current routing. Only in per-key mode:
 * a partition carries other keys, and its failing head may be another subscription's event.
 */
async function groupOfSubscription(api: ApiClient, subscriptionId: string): Promise<string> {
  await requireSubscription(api, subscriptionId);
  const routing = await api.send({ method: 'GET', path: '/v1/routing' }, routingSchema);
  const groups = groupsOfSubscription(subscriptionId, routing.partition_count);
  if (groups.isShared) {
    throw new UsageError(
      `In partition mode subscription ${subscriptionId} is routed to ${groups.current}, which also carries other keys: its failing head may be another subscription's event. ` +
        `Skip with --group ${groups.current} --event <event_id> (the webhook-id the receiver keeps refusing).`,
    );
  }
  return groups.current;
}
