/**
 * The drain-and-switch procedure over the routing API: pause ingest, wait until nothing is
 * pending, switch the versioned routing, resume, and read it back. A key's events must never be
 * pending in two message groups at once, so the switch happens only on an empty queue; and
 * whatever fails after the pause, ingest is resumed before returning (unless asked to stay
 * paused), because a paused ingest refuses every producer.
 */
import type { ApiClient } from '../api/client.js';
import { routingSchema, type Routing } from '../api/schemas.js';
import type { CommandIo } from '../command.js';
import { SWITCH_WAIT_SECONDS } from '../../lambda/core/routing-settings.js';
import { formatSeconds } from '../duration.js';
import { ApiError, TimedOutError } from '../errors.js';
import { createProgressBar, type ProgressNote } from '../output/progress.js';
import { pollUntil } from '../poll.js';
import { countPendingMessages, describePartitions, describePending, describeRouting, isDrained } from './describe.js';

const GET_ROUTING = { method: 'GET', path: '/v1/routing' } as const;
const PAUSE = { method: 'POST', path: '/v1/routing/pause' } as const;
const RESUME = { method: 'POST', path: '/v1/routing/resume' } as const;

/** How to resume ingest by hand, named wherever it is left paused. */
export const RESUME_HINT = 'resume it with `ordered-webhooks repartition --resume`';

/**
 * Refusals of the switch that mean "not yet" rather than "no": a pause younger than the API's
 * grace period, or work that became pending again. The switch is asked again until the deadline.
 */
const NOT_YET_REFUSALS: ReadonlySet<string> = new Set(['pause_too_recent', 'queue_not_empty']);

export interface DrainAndSwitchInput {
  readonly api: ApiClient;
  /** For resuming: not aborted by the Ctrl-C that may have caused the failure. */
  readonly cleanupApi: ApiClient;
  readonly io: CommandIo;
  /** The routing read before anything was changed. */
  readonly before: Routing;
  readonly target: number | null;
  readonly timeoutMs: number;
  readonly intervalMs: number;
  readonly isStayingPaused: boolean;
  /** Where each step is told (stderr). */
  readonly log: (line: string) => void;
}

export interface DrainAndSwitchResult {
  /** The routing read back at the end. */
  readonly current: Routing;
  /** What the read-back routing gets wrong; empty when verified. */
  readonly problems: readonly string[];
}

/** Runs the procedure; throws the failure after resuming ingest (or saying why it stays paused). */
export async function drainAndSwitch(input: DrainAndSwitchInput): Promise<DrainAndSwitchResult> {
  const { api, cleanupApi, before, log } = input;
  let isPauseSent = false;
  let switched: Routing;
  try {
    let paused = before;
    if (!before.is_paused) {
      log('Pausing ingest…');
      // Set first: a pause whose answer is lost may still have happened.
      isPauseSent = true;
      paused = await api.send(PAUSE, routingSchema);
    }
    log(`Ingest paused (version ${paused.version}). Waiting for the queue to drain…`);
    switched = await switchWhenDrained(input, paused);
  } catch (error) {
    await recoverFromFailure(input, isPauseSent);
    throw error;
  }
  log(`Switched to ${describePartitions(switched.partition_count)} (version ${switched.version}).`);

  if (input.isStayingPaused) {
    log(`Ingest left paused (--stay-paused): ${RESUME_HINT}.`);
  } else {
    try {
      await cleanupApi.send(RESUME, routingSchema);
    } catch (error) {
      log(`The new routing is in place (version ${switched.version}), but ingest is still paused: ${RESUME_HINT}.`);
      throw error;
    }
    log('Ingest resumed.');
  }

  const current = await cleanupApi.send(GET_ROUTING, routingSchema);
  const problems = [
    ...(current.version > before.version ? [] : [`the version is ${current.version}, not above ${before.version}`]),
    ...(current.partition_count === input.target ? [] : [`the routing has ${describePartitions(current.partition_count)}`]),
    ...(current.is_paused === input.isStayingPaused ? [] : [`ingest is ${current.is_paused ? 'paused' : 'accepting events'}`]),
  ];
  return { current, problems };
}

/** Polls until nothing is pending, then asks for the switch, asking again while the answer is "not yet". */
async function switchWhenDrained(input: DrainAndSwitchInput, paused: Routing): Promise<Routing> {
  const { api, io } = input;
  const pausedVersion = paused.version;
  const bar = createProgressBar(io.stderr, 'Draining');
  let mostPending = 0;
  let lastRefusal: ApiError | undefined;
  try {
    return await pollUntil({
      what: 'the queue to drain and the switch to be accepted',
      timeoutMs: input.timeoutMs,
      intervalMs: input.intervalMs,
      clock: io.clock,
      signal: io.signal,
      check: async () => {
        const routing = await api.send(GET_ROUTING, routingSchema);
        const remaining = countPendingMessages(routing);
        mostPending = Math.max(mostPending, remaining);
        bar.update(mostPending - remaining, mostPending, describePending(routing));
        if (!isDrained(routing)) return undefined;
        try {
          // The paused version: a switch by anyone else since then is a conflict, not ours to override.
          return await api.send({ method: 'PUT', path: '/v1/routing', body: { partition_count: input.target, expected_version: pausedVersion } }, routingSchema);
        } catch (error) {
          if (!(error instanceof ApiError && error.status === 409 && NOT_YET_REFUSALS.has(error.code))) throw error;
          lastRefusal = error;
          bar.update(mostPending, mostPending, error.code === PAUSE_TOO_RECENT ? describePauseGrace(error, paused, input) : 'events became pending again: waiting for them');
          return undefined;
        }
      },
      onTransientError: (error) => bar.update(mostPending, mostPending, `${error.message} (asking again)`),
    });
  } catch (error) {
    if (error instanceof TimedOutError && lastRefusal !== undefined) throw new TimedOutError(`${error.message} Last refusal: ${lastRefusal.code}: ${lastRefusal.apiMessage}`);
    throw error;
  } finally {
    bar.finish();
  }
}

const PAUSE_TOO_RECENT = 'pause_too_recent';

/**
 * The wait of a `pause_too_recent` refusal, as a countdown to the end of the API's pause grace
 * rather than its error code. The end is the answer's `Retry-After` when it has one, otherwise
 * the pause time plus the deployed wait (SWITCH_WAIT_SECONDS, the constant the API uses). A
 * terminal redraws the countdown every second; plain lines give the time once, so that they do
 * not repeat at every poll. The switch is asked again at every interval regardless, so a shorter
 * grace than estimated is not waited out.
 */
function describePauseGrace(refusal: ApiError, paused: Routing, input: DrainAndSwitchInput): ProgressNote {
  const { clock, stderr } = input.io;
  const pausedAtMs = paused.paused_at == null ? Number.NaN : Date.parse(paused.paused_at);
  const endsAtMs =
    refusal.retryAfterSeconds !== undefined ? clock.now() + refusal.retryAfterSeconds * 1_000 : Number.isNaN(pausedAtMs) ? undefined : pausedAtMs + SWITCH_WAIT_SECONDS * 1_000;
  const why = 'a request may still be enqueueing under the old routing, or SQS\'s counts settling';
  if (endsAtMs === undefined) return `pause grace: the API accepts the switch a short while after the pause (${why})`;
  if (stderr.isTTY !== true) return `pause grace: the API accepts the switch from ${new Date(Math.ceil(endsAtMs / 1_000) * 1_000).toISOString()} (${why})`;
  return () => `pause grace: switching in ${formatSeconds(Math.max(0, Math.ceil((endsAtMs - clock.now()) / 1_000)))} (${why})`;
}

/**
 * After a failure: resume what this command paused, and say what state ingest is left in. A
 * failed resume is told here, not thrown: the caller reports the failure that caused it.
 */
async function recoverFromFailure(input: DrainAndSwitchInput, isPauseSent: boolean): Promise<void> {
  const { log } = input;
  if (!isPauseSent) {
    if (input.before.is_paused) log('Ingest was paused before this command started and is left paused.');
    return;
  }
  if (input.isStayingPaused) {
    log(`Ingest left paused (--stay-paused): ${RESUME_HINT}.`);
    return;
  }
  try {
    const resumed = await input.cleanupApi.send(RESUME, routingSchema);
    log(`Resumed ingest; routing now: ${describeRouting(resumed)}.`);
  } catch (resumeError) {
    const reason = resumeError instanceof Error ? resumeError.message : String(resumeError);
    log(`Could not resume ingest (${reason}): it is still paused; ${RESUME_HINT}.`);
  }
}
