/**
 * `ordered-webhooks repartition` against a fake routing API: the drain-and-switch sequence
 * (pause → drain polling → PUT → resume → verify), and ingest resumed whenever it fails after
 * the pause.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../cli/exit-codes.js';
import { systemClock, type Clock } from '../../cli/poll.js';
import { apiError, useFakeApi, type FakeApi, type RecordedRequest, type Reply } from './support/fake-api.js';
import { runCommand } from './support/run-cli.js';

interface RoutingState {
  version: number;
  partition_count: number | null;
  is_paused: boolean;
}

interface FakeRoutingOptions {
  readonly initial?: Partial<RoutingState>;
  /** Pending messages on each GET while paused; the last one repeats. */
  readonly drain?: readonly number[];
  /** Overrides the PUT; the fake's own switch when it returns undefined. */
  readonly put?: (request: RecordedRequest, call: number) => Reply | undefined;
  readonly resume?: (call: number) => Reply | undefined;
  /** Called on each GET while paused, e.g. to press Ctrl-C. */
  readonly onDrainPoll?: (poll: number) => void;
}

/** When the fake routing API says ingest was paused. */
const PAUSED_AT = '2025-01-02T15:04:05.000Z';
const PAUSED_AT_MS = Date.parse(PAUSED_AT);

/** A clock that starts at `startMs` and runs at the real pace, sleeping for real. */
function clockAt(startMs: number): Clock {
  const offsetMs = startMs - Date.now();
  return { now: () => Date.now() + offsetMs, sleep: systemClock.sleep };
}

/** A routing API that behaves as the real one is specified: versioned, paused, drained. */
function fakeRouting(api: FakeApi, options: FakeRoutingOptions = {}): RoutingState {
  const state: RoutingState = { version: 3, partition_count: null, is_paused: false, ...options.initial };
  const drain = options.drain ?? [0];
  let polls = 0;
  let pending = 5;
  const view = (): Reply => ({
    status: 200,
    body: {
      ...state,
      paused_at: state.is_paused ? PAUSED_AT : null,
      pending: { queued: pending, in_flight: pending > 0 ? 1 : 0, delayed: 0, groups_with_pending: pending > 0 ? 2 : 0 },
    },
  });
  api.on('GET /v1/routing', () => {
    if (state.is_paused) {
      pending = drain[Math.min(polls, drain.length - 1)] ?? 0;
      polls += 1;
      options.onDrainPoll?.(polls);
    }
    return view();
  });
  api.on('POST /v1/routing/pause', () => {
    state.is_paused = true;
    return view();
  });
  api.on('POST /v1/routing/resume', (_request, call) => {
    const override = options.resume?.(call);
    if (override !== undefined) return override;
    state.is_paused = false;
    return view();
  });
  api.on('PUT /v1/routing', (request, call) => {
    const override = options.put?.(request, call);
    if (override !== undefined) return override;
    const body = request.body as { partition_count: number | null; expected_version: number };
    if (body.expected_version !== state.version) return apiError(409, 'version_conflict', 'The routing changed since you read it; read it again.');
    if (!state.is_paused) return apiError(409, 'not_paused', 'Pause ingest first.');
    if (pending > 0) return apiError(409, 'queue_not_empty', 'Events are still pending.');
    state.version += 1;
    state.partition_count = body.partition_count;
    return view();
  });
  return state;
}

describe('repartition command', () => {
  const api = useFakeApi();

  const repartition = (...args: string[]) => ['repartition', '--url', api.url, '--interval', '5ms', ...args];

  it('pauses, polls until drained, switches with the version read, resumes and verifies', async () => {
    const state = fakeRouting(api, { drain: [5, 2, 0] });

    const run = await runCommand(repartition('--partitions', '8'));

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.calls()).toEqual([
      'GET /v1/routing',
      'POST /v1/routing/pause',
      'GET /v1/routing',
      'GET /v1/routing',
      'GET /v1/routing',
      'PUT /v1/routing',
      'POST /v1/routing/resume',
      'GET /v1/routing',
    ]);
    expect(api.requests.find((request) => request.method === 'PUT')?.body).toEqual({ partition_count: 8, expected_version: 3 });
    expect(state).toEqual({ version: 4, partition_count: 8, is_paused: false });
    // Plain progress lines without a terminal: the drain, as messages left of the most seen.
    expect(run.stderr).toContain('Draining: 0/6  5 queued, 1 in flight, 0 delayed, 2 group(s) with pending events\n');
    expect(run.stderr).toContain('Draining: 3/6  2 queued, 1 in flight, 0 delayed, 2 group(s) with pending events\n');
    expect(run.stderr).toContain('Draining: 6/6  0 queued, 0 in flight, 0 delayed, 0 group(s) with pending events\n');
    expect(run.stderr).not.toContain('\r');
    expect(run.stdout).toContain('Routing now: version 3, one message group per key, ingest accepting events');
    expect(run.stdout).toMatch(/Repartitioned: one message group per key → 8 partitions \(version 3 → 4\); ingest was paused for \d+s\.\n$/);
  });

  it('prints the previous and verified routing with --json, and goes back to per-key mode with none', async () => {
    fakeRouting(api, { initial: { partition_count: 8 } });

    const run = await runCommand(repartition('--partitions', 'none', '--json'));

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.requests.find((request) => request.method === 'PUT')?.body).toEqual({ partition_count: null, expected_version: 3 });
    const output = JSON.parse(run.stdout) as { previous: unknown; current: unknown; is_verified: boolean };
    expect(output).toMatchObject({ previous: { version: 3, partition_count: 8, is_paused: false }, current: { version: 4, partition_count: null, is_paused: false }, is_verified: true });
  });

  it('only reads and prints the plan with --dry-run', async () => {
    fakeRouting(api);

    const run = await runCommand(repartition('--partitions', '16', '--dry-run'));

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.calls()).toEqual(['GET /v1/routing']);
    expect(run.stdout).toContain('Pending now: 5 queued, 1 in flight, 0 delayed, 2 group(s) with pending events');
    expect(run.stdout).toContain('  3. switch to 16 partitions (expected version 3)');
    expect(run.stdout).toContain('Dry run: nothing was changed.');
  });

  it('changes nothing when the routing already has the partition count', async () => {
    fakeRouting(api, { initial: { partition_count: 8 } });

    const run = await runCommand(repartition('--partitions', '8'));

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.calls()).toEqual(['GET /v1/routing']);
    expect(run.stdout).toBe('The routing already has 8 partitions (version 3); nothing to switch.\n');
  });

  it('exits 3 pointing at --resume when the routing has the partition count but ingest is paused', async () => {
    fakeRouting(api, { initial: { partition_count: 8, is_paused: true } });

    const run = await runCommand(repartition('--partitions', '8'));

    expect(run.exitCode).toBe(ExitCode.attentionNeeded);
    expect(api.calls()).toEqual(['GET /v1/routing']);
    expect(run.stderr).toBe('Ingest is paused: resume it with `ordered-webhooks repartition --resume`.\n');
  });

  it('asks for the switch again while it is refused as not yet possible, telling when the pause grace ends', async () => {
    fakeRouting(api, { put: (_request, call) => (call === 1 ? apiError(409, 'pause_too_recent', 'Ingest was paused less than 30 s ago.') : undefined) });

    const run = await runCommand(repartition('--partitions', '4'), { clock: clockAt(PAUSED_AT_MS + 10_000) });

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.calls().filter((call) => call === 'PUT /v1/routing')).toHaveLength(2);
    // The fake paused at PAUSED_AT; the deployed wait is 90 s (the grace of 30 s, then SQS's counters settling).
    expect(run.stderr).toContain('pause grace: the API accepts the switch from 2025-01-02T15:05:35.000Z');
    expect(run.stderr).not.toContain('pause_too_recent');
  });

  it('counts the pause grace down on a terminal, from the pause time', async () => {
    fakeRouting(api, { put: (_request, call) => (call === 1 ? apiError(409, 'pause_too_recent', 'Ingest was paused less than 30 s ago.') : undefined) });

    const run = await runCommand(repartition('--partitions', '4'), { isTTY: true, clock: clockAt(PAUSED_AT_MS + 10_000) });

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(run.stderr).toMatch(/pause grace: switching in 1m ?(20|19)s/);
    expect(run.stderr).not.toContain('pause_too_recent');
  });

  it("counts down from the refusal's Retry-After when it has one", async () => {
    const refusal = { ...apiError(409, 'pause_too_recent', 'Ingest was paused less than 30 s ago.'), headers: { 'retry-after': '7' } };
    fakeRouting(api, { put: (_request, call) => (call === 1 ? refusal : undefined) });

    const run = await runCommand(repartition('--partitions', '4'), { isTTY: true, clock: clockAt(PAUSED_AT_MS + 10_000) });

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(run.stderr).toMatch(/pause grace: switching in (7|6)s/);
  });

  it.each(['version_conflict', 'not_paused'])('resumes ingest and exits 4 when the switch is refused with %s', async (code) => {
    const state = fakeRouting(api, { put: () => apiError(409, code, 'Refused.') });

    const run = await runCommand(repartition('--partitions', '4'));

    expect(run.exitCode).toBe(ExitCode.refused);
    expect(api.calls().slice(-2)).toEqual(['PUT /v1/routing', 'POST /v1/routing/resume']);
    expect(state).toEqual({ version: 3, partition_count: null, is_paused: false });
    expect(run.stderr).toContain('Resumed ingest; routing now: version 3, one message group per key, ingest accepting events.');
    expect(run.stderr).toContain(`ordered-webhooks repartition: PUT /v1/routing answered 409 ${code}: Refused.`);
  });

  it('resumes ingest and exits 5 when the queue does not drain before --timeout', async () => {
    const state = fakeRouting(api, { drain: [3] });

    const run = await runCommand(repartition('--partitions', '4', '--timeout', '60ms'));

    expect(run.exitCode).toBe(ExitCode.timedOut);
    expect(api.calls()).not.toContain('PUT /v1/routing');
    expect(api.calls().at(-1)).toBe('POST /v1/routing/resume');
    expect(state.is_paused).toBe(false);
    expect(run.stderr).toContain('Timed out after 60ms waiting for the queue to drain and the switch to be accepted.');
  });

  it('leaves ingest paused after a failure with --stay-paused, and says how to resume', async () => {
    const state = fakeRouting(api, { drain: [3] });

    const run = await runCommand(repartition('--partitions', '4', '--timeout', '30ms', '--stay-paused'));

    expect(run.exitCode).toBe(ExitCode.timedOut);
    expect(api.calls()).not.toContain('POST /v1/routing/resume');
    expect(state.is_paused).toBe(true);
    expect(run.stderr).toContain('Ingest left paused (--stay-paused): resume it with `ordered-webhooks repartition --resume`.');
  });

  it('resumes ingest and exits 130 when interrupted during the drain', async () => {
    const interrupt = new AbortController();
    const state = fakeRouting(api, { drain: [3], onDrainPoll: (poll) => poll === 2 && interrupt.abort() });

    const run = await runCommand(repartition('--partitions', '4'), { signal: interrupt.signal });

    expect(run.exitCode).toBe(ExitCode.interrupted);
    expect(api.calls().at(-1)).toBe('POST /v1/routing/resume');
    expect(state.is_paused).toBe(false);
  });

  it('resumes ingest when the pause answer is lost', async () => {
    fakeRouting(api);
    api.on('POST /v1/routing/pause', { status: 502, text: 'Bad Gateway' });

    const run = await runCommand(repartition('--partitions', '4'));

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(api.calls()).toEqual(['GET /v1/routing', 'POST /v1/routing/pause', 'POST /v1/routing/resume']);
    expect(run.stderr).toContain('POST /v1/routing/pause answered 502 http_502: Bad Gateway');
  });

  it('says the new routing is in place but ingest still paused when the resume fails', async () => {
    const state = fakeRouting(api, { resume: () => apiError(500, 'internal_error', 'Boom.') });

    const run = await runCommand(repartition('--partitions', '4'));

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(state).toEqual({ version: 4, partition_count: 4, is_paused: true });
    expect(run.stderr).toContain('The new routing is in place (version 4), but ingest is still paused: resume it with `ordered-webhooks repartition --resume`.');
  });

  it('switches and leaves ingest paused with --stay-paused', async () => {
    const state = fakeRouting(api);

    const run = await runCommand(repartition('--partitions', '4', '--stay-paused'));

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.calls()).not.toContain('POST /v1/routing/resume');
    expect(state).toEqual({ version: 4, partition_count: 4, is_paused: true });
    expect(run.stdout).toMatch(/ingest was paused for \d+s and still is\.\n$/);
  });

  it('does not pause again, nor resume after a failure, when ingest was already paused', async () => {
    const state = fakeRouting(api, { initial: { is_paused: true }, put: () => apiError(409, 'version_conflict', 'Changed.') });

    const run = await runCommand(repartition('--partitions', '4'));

    expect(run.exitCode).toBe(ExitCode.refused);
    expect(api.calls()).not.toContain('POST /v1/routing/pause');
    expect(api.calls()).not.toContain('POST /v1/routing/resume');
    expect(state.is_paused).toBe(true);
    expect(run.stderr).toContain('Ingest was paused before this command started and is left paused.');
  });

  it('exits 3 when the routing read back is not the one switched to', async () => {
    fakeRouting(api, { put: () => ({ status: 200, body: { version: 4, partition_count: 4, is_paused: true, pending: { queued: 0, in_flight: 0, delayed: 0, groups_with_pending: 0 } } }) });
    api.on('GET /v1/routing', [
      { status: 200, body: { version: 3, partition_count: null, is_paused: false, pending: { queued: 0, in_flight: 0, delayed: 0, groups_with_pending: 0 } } },
      { status: 200, body: { version: 3, partition_count: null, is_paused: true, pending: { queued: 0, in_flight: 0, delayed: 0, groups_with_pending: 0 } } },
      { status: 200, body: { version: 4, partition_count: 2, is_paused: false, pending: { queued: 0, in_flight: 0, delayed: 0, groups_with_pending: 0 } } },
    ]);

    const run = await runCommand(repartition('--partitions', '4'));

    expect(run.exitCode).toBe(ExitCode.attentionNeeded);
    expect(run.stderr).toContain('Verification failed: the routing has 2 partitions. Check GET /v1/routing.');
  });

  it('only resumes with --resume', async () => {
    const state = fakeRouting(api, { initial: { is_paused: true } });

    const run = await runCommand(repartition('--resume'));

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.calls()).toEqual(['POST /v1/routing/resume']);
    expect(state.is_paused).toBe(false);
    expect(run.stdout).toBe('Ingest resumed: version 3, one message group per key, ingest accepting events.\n');
  });

  it.each([
    [[], '--partitions is required'],
    [['--partitions', '0'], '--partitions must be a whole number of at least 1 (got "0")'],
    [['--partitions', '4', '--timeout', 'soon'], '--timeout must be a duration'],
    [['--resume', '--partitions', '4'], '--resume takes no --partitions'],
  ])('exits 2 and sends nothing for %j', async (args, message) => {
    const run = await runCommand(repartition(...args));

    expect(run.exitCode).toBe(ExitCode.usage);
    expect(run.stderr).toContain(message);
    expect(api.requests).toHaveLength(0);
  });
});
