/**
 * `dead-letters`: a subscription's dead letters, oldest first (`GET /v1/dead-letters`, every
 * page): the events its receiver never got, with the sequence number each one left as a gap.
 */
import { readDeadLetters } from '../api/dead-letters.js';
import type { DeadLetter } from '../api/schemas.js';
import { requireSubscription } from '../api/subscriptions.js';
import { connect, type Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { COMMON_OPTIONS, parseOptions, requireOption } from '../options.js';
import { EMPTY_CELL, renderTable, type Column } from '../output/table.js';
import { writeJson, writeLine } from '../output/stream.js';

const OPTIONS = { ...COMMON_OPTIONS, subscription: { type: 'string' } } as const;

const COLUMNS: readonly Column<DeadLetter>[] = [
  { header: 'EVENT ID', cell: (row) => row.event_id },
  { header: 'SEQUENCE', cell: (row) => (row.sequence === null ? EMPTY_CELL : String(row.sequence)), align: 'right' },
  { header: 'ATTEMPTS', cell: (row) => String(row.attempts), align: 'right' },
  { header: 'DEAD-LETTERED AT', cell: (row) => row.dead_lettered_at },
  { header: 'REASON', cell: (row) => row.reason, maxWidth: 60 },
];

export const deadLettersCommand: Command = {
  name: 'dead-letters',
  summary: "a subscription's dead letters, oldest first",
  help: `Usage: ordered-webhooks dead-letters --subscription <subscription_id> [--json]

Lists the subscription's dead letters, oldest first: event id, sequence (the gap its receiver
saw; - for an event SQS's backstop moved before it had one), attempts, when and why it was given
up (GET /v1/dead-letters, every page). --json prints the API's answer with the items of all pages.
A subscription that does not exist is an error (exit 1), not an empty list.

Options:
  --subscription <id>  the subscription (required)`,
  run: async (args, io) => {
    const values = parseOptions(args, OPTIONS);
    const subscriptionId = requireOption('subscription', values.subscription);
    const api = connect(values, io);
    const answer = await readDeadLetters(api, subscriptionId);
    // The list route answers an unknown subscription with an empty list: tell the two apart.
    if (answer.items.length === 0) await requireSubscription(api, subscriptionId);
    if (values.json === true) writeJson(io.stdout, answer);
    else if (answer.items.length === 0) writeLine(io.stdout, `Subscription ${subscriptionId} has no dead letters.`);
    else io.stdout.write(renderTable(COLUMNS, answer.items));
    return ExitCode.ok;
  },
};
