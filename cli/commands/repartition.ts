/**
 * `repartition`: changes the partition count (or goes back to one message group per key) with the
 * drain-and-switch procedure, so that no key ever has events pending in two message groups.
 * `--dry-run` prints the plan; `--resume` only resumes a paused ingest.
 */
import type { ApiClient } from '../api/client.js';
import { routingSchema } from '../api/schemas.js';
import { connect, type Command, type CommandIo } from '../command.js';
import { formatMs, formatSeconds } from '../duration.js';
import { UsageError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { COMMON_OPTIONS, INTERVAL_OPTION, durationOption, integerOption, intervalOption, parseOptions } from '../options.js';
import { writeJson, writeLine } from '../output/stream.js';
import { describePartitions, describePlan, describeRouting } from '../routing/describe.js';
import { RESUME_HINT, drainAndSwitch } from '../routing/drain-and-switch.js';

/** How long the drain may take before the command resumes ingest and gives up, unless `--timeout` says otherwise. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 30 * 60_000;

/** `--partitions none`: back to one message group per ordering key. */
const PER_KEY = 'none';

const OPTIONS = {
  ...COMMON_OPTIONS,
  ...INTERVAL_OPTION,
  partitions: { type: 'string' },
  timeout: { type: 'string' },
  'dry-run': { type: 'boolean' },
  'stay-paused': { type: 'boolean' },
  resume: { type: 'boolean' },
} as const;

/** `8` → 8, `none` → null (per-key mode). */
export function parsePartitions(value: string | undefined): number | null {
  if (value === undefined) throw new UsageError(`--partitions is required: a number of partitions, or "${PER_KEY}" for one message group per key.`);
  return value.trim().toLowerCase() === PER_KEY ? null : integerOption('partitions', value, 1);
}

export const repartitionCommand: Command = {
  name: 'repartition',
  summary: 'change the partition count safely: pause, drain, switch, resume, verify',
  help: `Usage: ordered-webhooks repartition --partitions <N|none> [--timeout <duration>] [--dry-run] [--stay-paused] [--json]
       ordered-webhooks repartition --resume

Changes how ordering keys map to message groups without ever splitting a key across two groups:
  1. pause ingest (POST /v1/routing/pause): producers get 503 with Retry-After, nothing is lost
  2. wait until nothing is pending (GET /v1/routing), with a progress bar
  3. switch the routing (PUT /v1/routing with the version paused), refused unless drained
  4. resume ingest (POST /v1/routing/resume)
  5. verify the new routing (GET /v1/routing)
If anything fails after the pause, ingest is resumed with the old routing before the command
exits, unless --stay-paused. Ctrl-C during the wait does the same.

Options:
  --partitions <N|none>   the new partition count, or "none" for one message group per key
  --timeout <duration>    how long to wait for the drain (default ${formatMs(DEFAULT_DRAIN_TIMEOUT_MS)}); exit 5
  --interval <duration>   how often to look (default 2s)
  --dry-run               print the current routing and the plan; change nothing
  --stay-paused           leave ingest paused afterwards, or after a failure
  --resume                only resume a paused ingest (after --stay-paused or a failed resume)`,
  run: async (args, io) => {
    const values = parseOptions(args, OPTIONS);
    if (values.resume === true) {
      if (values.partitions !== undefined || values['dry-run'] === true || values['stay-paused'] === true) {
        throw new UsageError('--resume takes no --partitions, --dry-run or --stay-paused.');
      }
      return resumeOnly(connect(values, io), io, values.json === true);
    }
    const target = parsePartitions(values.partitions);
    const timeoutMs = durationOption('timeout', values.timeout, DEFAULT_DRAIN_TIMEOUT_MS);
    const intervalMs = intervalOption(values.interval);
    const isStayingPaused = values['stay-paused'] === true;
    const isJson = values.json === true;
    const log = (line: string): void => writeLine(io.stderr, line);
    const api = connect(values, io);

    const before = await api.send({ method: 'GET', path: '/v1/routing' }, routingSchema);
    if (values['dry-run'] === true) {
      if (isJson) writeJson(io.stdout, { dry_run: true, routing: before, partition_count: target });
      else writeLine(io.stdout, `${describePlan(before, target, timeoutMs, isStayingPaused)}\nDry run: nothing was changed.`);
      return ExitCode.ok;
    }
    if (before.partition_count === target) {
      if (isJson) writeJson(io.stdout, { previous: before, current: before, is_changed: false, is_verified: true });
      else writeLine(io.stdout, `The routing already has ${describePartitions(target)} (version ${before.version}); nothing to switch.`);
      if (!before.is_paused) return ExitCode.ok;
      log(`Ingest is paused: ${RESUME_HINT}.`);
      return ExitCode.attentionNeeded;
    }
    if (!isJson) writeLine(io.stdout, describePlan(before, target, timeoutMs, isStayingPaused));

    const startedAt = io.clock.now();
    const { current, problems } = await drainAndSwitch({
      api,
      // Resuming after a failure must not be cut short by the Ctrl-C that caused it.
      cleanupApi: connect(values, { ...io, signal: new AbortController().signal }),
      io,
      before,
      target,
      timeoutMs,
      intervalMs,
      isStayingPaused,
      log,
    });
    const pausedSeconds = (io.clock.now() - startedAt) / 1_000;
    if (isJson) writeJson(io.stdout, { previous: before, current, is_changed: true, is_verified: problems.length === 0, paused_seconds: Math.round(pausedSeconds) });
    if (problems.length > 0) {
      log(`Verification failed: ${problems.join('; ')}. Check GET /v1/routing.`);
      return ExitCode.attentionNeeded;
    }
    if (!isJson) {
      writeLine(
        io.stdout,
        `Repartitioned: ${describePartitions(before.partition_count)} → ${describePartitions(current.partition_count)} (version ${before.version} → ${current.version}); ingest was paused for ${formatSeconds(pausedSeconds)}${isStayingPaused ? ' and still is' : ''}.`,
      );
    }
    return ExitCode.ok;
  },
};

async function resumeOnly(api: ApiClient, io: CommandIo, isJson: boolean): Promise<ExitCode> {
  const resumed = await api.send({ method: 'POST', path: '/v1/routing/resume' }, routingSchema);
  if (isJson) writeJson(io.stdout, resumed);
  else writeLine(io.stdout, `Ingest resumed: ${describeRouting(resumed)}.`);
  return ExitCode.ok;
}
