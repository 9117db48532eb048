/**
 * `lag`: the message groups with pending or dead-lettered events, worst first (`GET /v1/lag`).
 * With `--fail-on-stalled`, exits 3 when a group's oldest event has waited that long: a check
 * for cron jobs and CI.
 */
import { readLag } from '../api/lag.js';
import type { LagRow } from '../api/schemas.js';
import { connect, type Command } from '../command.js';
import { formatSeconds } from '../duration.js';
import { ExitCode } from '../exit-codes.js';
import { COMMON_OPTIONS, durationOption, parseOptions } from '../options.js';
import { EMPTY_CELL, renderTable, type Column } from '../output/table.js';
import { writeJson, writeLine } from '../output/stream.js';

const OPTIONS = { ...COMMON_OPTIONS, 'fail-on-stalled': { type: 'string' } } as const;

const COLUMNS: readonly Column<LagRow>[] = [
  { header: 'GROUP', cell: (row) => row.message_group_id },
  { header: 'DEPTH', cell: (row) => String(row.depth), align: 'right' },
  { header: 'OLDEST WAIT', cell: (row) => (row.depth > 0 ? formatSeconds(row.oldest_wait_seconds) : EMPTY_CELL), align: 'right' },
  { header: 'KEYS', cell: (row) => String(row.keys_affected), align: 'right' },
  { header: 'HEAD ATTEMPTS', cell: (row) => String(row.head_attempts), align: 'right' },
  { header: 'LAST ERROR', cell: (row) => row.last_error ?? EMPTY_CELL, maxWidth: 48 },
  { header: 'DEAD LETTERS', cell: (row) => (row.dead_lettered === undefined ? EMPTY_CELL : String(row.dead_lettered)), align: 'right' },
];

export const lagCommand: Command = {
  name: 'lag',
  summary: 'message groups with pending or dead-lettered events, worst first',
  help: `Usage: ordered-webhooks lag [--fail-on-stalled <duration>] [--json]

Shows every message group with pending or dead-lettered events, worst first: depth, how long
the oldest pending event has waited, keys affected, the head's failed attempts and last error,
and the group's dead letters (GET /v1/lag, every page). --json prints the API's answer as it
is, with the rows of all pages.

Options:
  --fail-on-stalled <duration>  exit 3 if any group's oldest event has waited at least this long
                                (90s, 5m, 1h; a bare number is seconds)`,
  run: async (args, io) => {
    const values = parseOptions(args, OPTIONS);
    const stalledAfterMs = values['fail-on-stalled'] === undefined ? undefined : durationOption('fail-on-stalled', values['fail-on-stalled'], 0);
    const answer = await readLag(connect(values, io));

    if (values.json === true) writeJson(io.stdout, answer);
    else if (answer.groups.length === 0) writeLine(io.stdout, 'No message group has pending or dead-lettered events.');
    else io.stdout.write(renderTable(COLUMNS, answer.groups));

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
