/**
 * `redrive`: puts a subscription's dead letters back into the delivery queue, in their original
 * order, keeping their event ids and sequence numbers. Each `POST /v1/dead-letters/redrive` does
 * a bounded step; the command repeats it until the API answers `is_done`.
 */
import { redriveAnswerSchema, type RedriveAnswer } from '../api/schemas.js';
import { connect, type Command } from '../command.js';
import { formatMs } from '../duration.js';
import { TimedOutError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { COMMON_OPTIONS, INTERVAL_OPTION, durationOption, intervalOption, parseOptions, requireOption } from '../options.js';
import { createProgressBar, createSpinner } from '../output/progress.js';
import { writeJson, writeLine } from '../output/stream.js';
import { pause } from '../poll.js';

/** How long a redrive may run before the command gives up, unless `--timeout` says otherwise. */
export const DEFAULT_REDRIVE_TIMEOUT_MS = 15 * 60_000;

const OPTIONS = { ...COMMON_OPTIONS, ...INTERVAL_OPTION, subscription: { type: 'string' }, timeout: { type: 'string' } } as const;

type RedrivenEvent = RedriveAnswer['redriven'][number];

export const redriveCommand: Command = {
  name: 'redrive',
  summary: "re-enqueue a subscription's dead letters in their original order",
  help: `Usage: ordered-webhooks redrive --subscription <subscription_id> [--timeout <duration>] [--json]

Puts the subscription's dead letters back into the delivery queue, in their original order, with
their event ids and sequence numbers (POST /v1/dead-letters/redrive, repeated until done).
Progress goes to stderr; the summary to stdout (--json: the totals and the events redriven).

Options:
  --subscription <id>     the subscription (required)
  --timeout <duration>    give up after this long (default ${formatMs(DEFAULT_REDRIVE_TIMEOUT_MS)}); exit 5
  --interval <duration>   pause before asking again when a step redrove nothing (default 2s)`,
  run: async (args, io) => {
    const values = parseOptions(args, OPTIONS);
    const subscriptionId = requireOption('subscription', values.subscription);
    const timeoutMs = durationOption('timeout', values.timeout, DEFAULT_REDRIVE_TIMEOUT_MS);
    const intervalMs = intervalOption(values.interval);
    const api = connect(values, io);

    const deadline = io.clock.now() + timeoutMs;
    const redriven: RedrivenEvent[] = [];
    const label = `Redriving ${subscriptionId}`;
    // The total is known only from the first answer, and a step may take seconds: until then a
    // spinner shows that the command is at work.
    const firstStep = createSpinner(io.stderr, label, { now: io.clock.now });
    firstStep.update('sending the first step');
    const bar = createProgressBar(io.stderr, label);
    let last: RedriveAnswer;
    try {
      for (;;) {
        last = await api.send({ method: 'POST', path: '/v1/dead-letters/redrive', body: { subscription_id: subscriptionId } }, redriveAnswerSchema);
        firstStep.finish();
        redriven.push(...last.redriven);
        bar.update(redriven.length, redriven.length + last.remaining, `${last.remaining} remaining`);
        if (last.is_done) break;
        const leftMs = deadline - io.clock.now();
        if (leftMs <= 0) throw new TimedOutError(`Timed out after ${formatMs(timeoutMs)} redriving ${subscriptionId}: ${last.remaining} dead letter(s) remain.`);
        // A step that moved nothing (e.g. the dead letters are not visible yet) is not repeated at once.
        if (last.redriven.length === 0) await pause(io, Math.min(intervalMs, leftMs));
      }
    } catch (error) {
      firstStep.finish();
      bar.finish();
      if (redriven.length > 0) writeLine(io.stderr, `${redriven.length} dead letter(s) were redriven before this failure; run the command again to redrive the rest.`);
      throw error;
    }
    bar.finish();

    if (values.json === true) {
      writeJson(io.stdout, { subscription_id: subscriptionId, redriven: redriven.length, remaining: last.remaining, is_done: last.is_done, events: redriven });
    } else {
      writeLine(io.stdout, describeRedrive(subscriptionId, redriven));
    }
    return ExitCode.ok;
  },
};

function describeRedrive(subscriptionId: string, redriven: readonly RedrivenEvent[]): string {
  if (redriven.length === 0) return `Subscription ${subscriptionId} has no dead letters to redrive.`;
  const sequences = redriven.flatMap((event) => (event.sequence === null ? [] : [event.sequence]));
  const range = sequences.length === 0 ? '' : ` (sequences ${sequences.reduce((a, b) => Math.min(a, b))} to ${sequences.reduce((a, b) => Math.max(a, b))})`;
  return `Redrove ${redriven.length} dead letter(s) of subscription ${subscriptionId}${range}, in their original order.`;
}
