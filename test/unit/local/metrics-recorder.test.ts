import { describe, expect, it } from 'vitest';
import { MAX_METRICS_MINUTES, metricsWindowOf } from '../../../lambda/core/metrics.js';
import { createMetricsRecorder } from '../../../local/metrics-recorder.js';

const start = Date.parse('2026-12-02T12:00:00.000Z');
const counts = (delivered: number, failedAttempts = 0, deadLettered = 0) => ({ delivered, failedAttempts, deadLettered, faults: 0 });

/** A recorder on a clock the test moves. */
function recorderAt(ms: number) {
  let now = ms;
  const recorder = createMetricsRecorder(() => new Date(now));
  return { recorder, setNow: (next: number) => (now = next) };
}

describe('createMetricsRecorder', () => {
  it('sums each count per minute, the current minute included', async () => {
    const { recorder, setNow } = recorderAt(start + 5_000);
    recorder.record(counts(2, 1));
    setNow(start + 59_999);
    recorder.record(counts(3, 0, 1));
    setNow(start + 60_000);
    recorder.record(counts(1));
    const series = await recorder.readConsumerSeries(metricsWindowOf(2, new Date(start + 60_000)));
    expect(series).toEqual({
      delivered: [
        { at: new Date(start), sum: 5 },
        { at: new Date(start + 60_000), sum: 1 },
      ],
      failedAttempts: [
        { at: new Date(start), sum: 1 },
        { at: new Date(start + 60_000), sum: 0 },
      ],
      deadLettered: [
        { at: new Date(start), sum: 1 },
        { at: new Date(start + 60_000), sum: 0 },
      ],
      source: 'local',
    });
  });

  it('answers only the minutes of the window: since inclusive, until exclusive', async () => {
    const { recorder, setNow } = recorderAt(start);
    for (let minute = 0; minute < 5; minute += 1) {
      setNow(start + minute * 60_000);
      recorder.record(counts(minute + 1));
    }
    const series = await recorder.readConsumerSeries({ since: new Date(start + 60_000), until: new Date(start + 3 * 60_000) });
    expect(series.delivered).toEqual([
      { at: new Date(start + 60_000), sum: 2 },
      { at: new Date(start + 120_000), sum: 3 },
    ]);
  });

  it('keeps no more than the last MAX_METRICS_MINUTES minutes, however long it runs', async () => {
    const { recorder, setNow } = recorderAt(start);
    const minutes = MAX_METRICS_MINUTES + 50;
    for (let minute = 0; minute < minutes; minute += 1) {
      setNow(start + minute * 60_000 + 1_000);
      recorder.record(counts(1));
      expect(recorder.minutesHeld()).toBeLessThanOrEqual(MAX_METRICS_MINUTES);
    }
    expect(recorder.minutesHeld()).toBe(MAX_METRICS_MINUTES);
    const last = start + (minutes - 1) * 60_000;
    const everything = await recorder.readConsumerSeries({ since: new Date(0), until: new Date(last + 60_000) });
    expect(everything.delivered).toHaveLength(MAX_METRICS_MINUTES);
    expect(everything.delivered[0]?.at).toEqual(new Date(last - (MAX_METRICS_MINUTES - 1) * 60_000));
  });

  it('keeps the minute just counted when the clock goes back, forgetting the minutes it put in the future', async () => {
    const { recorder, setNow } = recorderAt(start);
    for (let minute = 0; minute < MAX_METRICS_MINUTES * 2; minute += 1) {
      setNow(start - minute * 60_000);
      recorder.record(counts(1));
      expect(recorder.minutesHeld()).toBeLessThanOrEqual(MAX_METRICS_MINUTES);
    }
    // Back 2 × MAX_METRICS_MINUTES − 1 minutes: only the minute now is kept, its count whole.
    const now = start - (MAX_METRICS_MINUTES * 2 - 1) * 60_000;
    recorder.record(counts(4));
    expect(recorder.minutesHeld()).toBe(1);
    const series = await recorder.readConsumerSeries(metricsWindowOf(1, new Date(now)));
    expect(series.delivered).toEqual([{ at: new Date(now), sum: 5 }]);
  });

  it('holds no minute for an invocation that counted nothing', () => {
    const { recorder } = recorderAt(start);
    recorder.record(counts(0));
    expect(recorder.minutesHeld()).toBe(0);
  });
});
