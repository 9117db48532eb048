/**
 * `lag`: the message groups with pending or dead-lettered events, worst first (`GET /v1/lag`),
 * each with its ordering key when the API names it. `--subscription` keeps the subscription's
 * groups. With `--fail-on-stalled`, exits 3 when a group's oldest event has waited that long: a
 * check for cron jobs and CI.
 */
import { readLag } from '../api/lag.js';
import type { ApiClient } from '../api/client.js';
import { routingSchema, type LagAnswer, type LagRow } from '../api/schemas.js';
import { requireSubscription } from '../api/subscriptions.js';
import { connect, type Command } from '../command.js';
import { formatSeconds } from '../duration.js';
import { ExitCode } from '../exit-codes.js';
import { COMMON_OPTIONS, durationOption, parseOptions, requireOption } from '../options.js';
import { EMPTY_CELL, renderTable, type Column } from '../output/table.js';
import { writeJson, writeLine } from '../output/stream.js';
import { groupsOfSubscription, isRowOfSubscription } from '../routing/message-group.js';

const OPTIONS = { ...COMMON_OPTIONS, 'fail-on-stalled': { type: 'string' }, subscription: { type: 'string' } } as const;

const COLUMNS: readonly Column<LagRow>[] = [
  { header: 'GROUP', cell: (row) => row.message_group_id },
  // null (a partition: several keys) and absent (an API older than the field) both show "-".
  { header: 'ORDERING KEY', cell: (row) => row.ordering_key ?? EMPTY_CELL, maxWidth: 40 },
  { header: 'DEPTH', cell: (row) => String(row.depth), align: 'right' },
  { header: 'OLDEST WAIT', cell: (row) => (row.depth > 0 ? formatSeconds(row.oldest_wait_seconds) : EMPTY_CELL), align: 'right' },
  { header: 'KEYS', cell: (row) => String(row.keys_affected), align: 'right' },
  { header: 'HEAD ATTEMPTS', cell: (row) => String(row.head_attempts), align: 'right' },
  { header: 'LAST ERROR', cell: (row) => row.last_error ?? EMPTY_CELL, maxWidth: 48 },
  { header: 'DEAD LETTERS', cell: (row) => (row.dead_lettered === undefined ? EMPTY_CELL : String(row.dead_lettered)), align: 'right' },
  // Absent from an API older than the rates: "-".
  { header: 'ACCEPTED/MIN', cell: (row) => (row.accepted_per_minute === undefined ? EMPTY_CELL : String(row.accepted_per_minute)), align: 'right' },
  { header: 'DELIVERED/MIN', cell: (row) => (row.delivered_per_minute === undefined ? EMPTY_CELL : String(row.delivered_per_minute)), align: 'right' },
  { header: 'BEHIND', cell: (row) => (row.is_falling_behind === true ? 'yes' : EMPTY_CELL) },
  { header: 'PAUSED', cell: (row) => (row.is_paused === true ? 'yes' : EMPTY_CELL) },
];

export const lagCommand: Command = {
  name: 'lag',
  summary: 'message groups with pending or dead-lettered events, worst first',
  help: `Usage: ordered-webhooks lag [--subscription <subscription_id>] [--fail-on-stalled <duration>] [--json]

Shows every message group with pending or dead-lettered events, worst first: its ordering key
(- for a partition, which carries several keys), depth, how long the oldest pending event has
waited, keys affected, the head's failed attempts and last error, the group's dead letters, its
events accepted and delivered in the last full minute, "yes" under BEHIND for a key falling
behind: fed at least as fast as it delivers, one event or batch per round trip of its endpoint,
and "yes" under PAUSED for a group held for a paused subscription (GET /v1/lag, every page). --json prints the API's answer as it is, with the rows of all pages
(only the subscription's with --subscription).

Options:
  --subscription <id>           only the subscription's groups: the rows whose ordering key is
                                the subscription, or, where the API names no key, the group its
                                events are routed to (computed as ingest does, from GET /v1/routing;
                                in partition mode that partition also carries other keys)
  --fail-on-stalled <duration>  exit 3 if any group's oldest event has waited at least this long
                                (90s, 5m, 1h; a bare number is seconds)`,
  run: async (args, io) => {
    const values = parseOptions(args, OPTIONS);
    const stalledAfterMs = values['fail-on-stalled'] === undefined ? undefined : durationOption('fail-on-stalled', values['fail-on-stalled'], 0);
    const subscriptionId = values.subscription === undefined ? undefined : requireOption('subscription', values.subscription);
    const api = connect(values, io);
    const whole = await readLag(api);
    const answer = subscriptionId === undefined ? whole : await keepSubscription(api, whole, subscriptionId, (line) => writeLine(io.stderr, line));

    if (values.json === true) writeJson(io.stdout, answer);
    else if (answer.groups.length > 0) io.stdout.write(renderTable(COLUMNS, answer.groups));
    else if (subscriptionId === undefined) writeLine(io.stdout, 'No message group has pending or dead-lettered events.');
    else writeLine(io.stdout, `No message group of subscription ${subscriptionId} has pending or dead-lettered events.`);

    if (stalledAfterMs === undefined) return ExitCode.ok;
    const stalled = answer.groups.filter((row) => row.depth > 0 && row.oldest_wait_seconds * 1_000 >= stalledAfterMs);
    const worst = stalled.reduce<LagRow | undefined>((max, row) => (max === undefined || row.oldest_wait_seconds > max.oldest_wait_seconds ? row : max), undefined);
    if (worst === undefined) return ExitCode.ok;
    writeLine(
      io.stderr,
      `${stalled.length} message group(s) have waited at least ${formatSeconds(stalledAfterMs / 1_000)}; the worst, ${worst.message_group_id}, ${formatSeconds(worst.oldest_wait_seconds)} with ${worst.head_attempts} failed attempt(s) on its head.`,
    );
    return ExitCode.attentionNeeded;
  },
};

/**
 * The rows of the subscription's groups (see `isRowOfSubscription`). The routing is read only
 * when a row names no ordering key; an empty result is checked against the subscriptions, so
 * that a mistyped id is an error rather than "nothing pending".
 */
async function keepSubscription(api: ApiClient, answer: LagAnswer, subscriptionId: string, warn: (line: string) => void): Promise<LagAnswer> {
  const isKeyNamedEverywhere = answer.groups.every((row) => typeof row.ordering_key === 'string');
  const partitionCount = isKeyNamedEverywhere ? null : (await api.send({ method: 'GET', path: '/v1/routing' }, routingSchema)).partition_count;
  const groups = groupsOfSubscription(subscriptionId, partitionCount);
  const rows = answer.groups.filter((row) => isRowOfSubscription(row, subscriptionId, groups));
  if (rows.length === 0) await requireSubscription(api, subscriptionId);
  if (groups.isShared && rows.some((row) => row.message_group_id === groups.current)) {
    warn(`${groups.current} is a partition: its row also counts other subscriptions' keys.`);
  }
  return { ...answer, groups: rows };
}
