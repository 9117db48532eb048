/**
 * `import-backstop`: moves what SQS's backstop set aside in the FIFO dead-letter queue (a crash
 * loop) into the store of dead letters, where it is listed and redriven like any dead letter.
 * Each `POST /v1/dead-letters/import` does a bounded step; the command repeats it until the API
 * answers `is_done`. Records that are no event stay in the queue: exit 3, for a person to look.
 */
import { importAnswerSchema, type ImportAnswer } from '../api/schemas.js';
import { connect, type Command } from '../command.js';
import { formatMs } from '../duration.js';
import { TimedOutError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { COMMON_OPTIONS, INTERVAL_OPTION, durationOption, intervalOption, parseOptions } from '../options.js';
import { createSpinner } from '../output/progress.js';
import { writeJson, writeLine } from '../output/stream.js';
import { EMPTY_CELL, renderTable, type Column } from '../output/table.js';
import { pause } from '../poll.js';

/** How long an import may run before the command gives up, unless `--timeout` says otherwise. */
export const DEFAULT_IMPORT_TIMEOUT_MS = 15 * 60_000;

const OPTIONS = { ...COMMON_OPTIONS, ...INTERVAL_OPTION, timeout: { type: 'string' } } as const;

type ImportedEvent = ImportAnswer['imported'][number];

const COLUMNS: readonly Column<ImportedEvent>[] = [
  { header: 'EVENT ID', cell: (row) => row.event_id },
  { header: 'SUBSCRIPTION', cell: (row) => row.subscription_id },
  { header: 'SEQUENCE', cell: (row) => (row.sequence === null ? EMPTY_CELL : String(row.sequence)), align: 'right' },
];

export const importBackstopCommand: Command = {
  name: 'import-backstop',
  summary: "import what SQS's backstop moved aside into the dead letters",
  help: `Usage: ordered-webhooks import-backstop [--timeout <duration>] [--json]

Imports what SQS's backstop moved to the FIFO dead-letter queue (a message received too often: a
crash loop) into the store of dead letters (POST /v1/dead-letters/import, repeated until done).
Imported events are then listed by \`dead-letters\` and redriven by \`redrive\` like any dead
letter; an event without a sequence shows -. Records that are no event stay in the queue: exit 3,
look at them in the SQS console. Progress goes to stderr; what was imported to stdout (--json:
the totals and the events imported).

Options:
  --timeout <duration>    give up after this long (default ${formatMs(DEFAULT_IMPORT_TIMEOUT_MS)}); exit 5
  --interval <duration>   pause before asking again when a step imported nothing (default 2s)`,
  run: async (args, io) => {
    const values = parseOptions(args, OPTIONS);
    const timeoutMs = durationOption('timeout', values.timeout, DEFAULT_IMPORT_TIMEOUT_MS);
    const intervalMs = intervalOption(values.interval);
    const api = connect(values, io);

    const deadline = io.clock.now() + timeoutMs;
    const imported: ImportedEvent[] = [];
    const spinner = createSpinner(io.stderr, 'Importing the backstop queue', { now: io.clock.now });
    let last: ImportAnswer;
    try {
      for (;;) {
        last = await api.send({ method: 'POST', path: '/v1/dead-letters/import' }, importAnswerSchema);
        imported.push(...last.imported);
        spinner.update(`${imported.length} imported${last.unreadable === 0 ? '' : `, ${last.unreadable} unreadable`}`);
        if (last.is_done) break;
        const leftMs = deadline - io.clock.now();
        if (leftMs <= 0) throw new TimedOutError(`Timed out after ${formatMs(timeoutMs)} importing the backstop queue, which still holds messages.`);
        // A step that moved nothing is not repeated at once.
        if (last.imported.length === 0) await pause(io, Math.min(intervalMs, leftMs));
      }
    } catch (error) {
      spinner.finish();
      if (imported.length > 0) writeLine(io.stderr, `${imported.length} event(s) were imported before this failure; run the command again to import the rest.`);
      throw error;
    }
    spinner.finish();

    // Each step receives the unreadable records again (a step releases them when it ends), so the
    // last step's count is what is left; a sum would count each once per step.
    const { unreadable } = last;
    if (values.json === true) {
      writeJson(io.stdout, { imported: imported.length, unreadable, is_done: last.is_done, events: imported });
    } else {
      if (imported.length > 0) io.stdout.write(renderTable(COLUMNS, imported));
      writeLine(io.stdout, describeImport(imported, unreadable));
    }
    if (unreadable === 0) return ExitCode.ok;
    writeLine(
      io.stderr,
      `${unreadable} record(s) in the backstop queue are no event and were left there: look at them in the SQS console (the delivery queue's dead-letter queue).`,
    );
    return ExitCode.attentionNeeded;
  },
};

/** Subscriptions named in the summary; the table lists every event. */
const MAX_NAMED_SUBSCRIPTIONS = 5;

function describeImport(imported: readonly ImportedEvent[], unreadable: number): string {
  const left = `${unreadable} unreadable record(s) left in it.`;
  if (imported.length === 0) return `The backstop queue held no event to import; ${left}`;
  const subscriptions = [...new Set(imported.map((event) => event.subscription_id))];
  const named = subscriptions.slice(0, MAX_NAMED_SUBSCRIPTIONS).join(', ') + (subscriptions.length > MAX_NAMED_SUBSCRIPTIONS ? ', …' : '');
  return (
    `Imported ${imported.length} event(s) from the backstop queue into the dead letters of ${subscriptions.length} subscription(s) (${named}); ${left}\n` +
    'List them with `ordered-webhooks dead-letters --subscription <id>`, redrive them with `ordered-webhooks redrive --subscription <id>`.'
  );
}
