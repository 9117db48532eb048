/**
 * The spinner and the bar on a terminal: what they redraw on their own timers, between updates.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createProgressBar, createSpinner } from '../../cli/output/progress.js';
import type { OutputStream } from '../../cli/output/stream.js';

function terminal(): OutputStream & { readonly writes: string[] } {
  const writes: string[] = [];
  return { isTTY: true, columns: 100, writes, write: (text: string) => writes.push(text) };
}

describe('createSpinner', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('moves its elapsed clock on its own frames when no update comes', () => {
    let nowMs = 1_000_000;
    const stream = terminal();
    const spinner = createSpinner(stream, 'Waiting', { now: () => nowMs });
    spinner.update('depth 4');

    nowMs += 3_000;
    vi.advanceTimersByTime(100);
    nowMs += 62_000;
    vi.advanceTimersByTime(100);
    spinner.finish();

    expect(stream.writes[1]).toMatch(/ Waiting {2}depth 4 {2}0s$/);
    expect(stream.writes[2]).toMatch(/ Waiting {2}depth 4 {2}3s$/);
    expect(stream.writes[3]).toMatch(/ Waiting {2}depth 4 {2}1m05s$/);
  });

  it('stops drawing once finished, and clears the line once', () => {
    const stream = terminal();
    const spinner = createSpinner(stream, 'Waiting', { now: () => 0 });

    spinner.finish();
    spinner.finish();
    vi.advanceTimersByTime(1_000);

    expect(stream.writes.filter((text) => text === '\r\x1b[2K')).toHaveLength(1);
    expect(stream.writes.at(-1)).toBe('\r\x1b[2K');
  });
});

describe('createProgressBar', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('redraws a note given as a function every second until the next update', () => {
    let left = 3;
    const stream = terminal();
    const bar = createProgressBar(stream, 'Draining');

    bar.update(0, 0, () => `switching in ${left}s`);
    left = 2;
    vi.advanceTimersByTime(1_000);
    bar.update(0, 0, 'done waiting');
    left = 1;
    vi.advanceTimersByTime(3_000);
    bar.finish();

    expect(stream.writes.map((text) => text.replace(/^[^]*%/, ''))).toEqual(['  switching in 3s', '  switching in 2s', '  done waiting', '\r\x1b[2K']);
  });

  it('prints a function note once per distinct text on plain lines', () => {
    const writes: string[] = [];
    const bar = createProgressBar({ write: (text: string) => writes.push(text) }, 'Draining');

    bar.update(0, 0, () => 'pause grace');
    bar.update(0, 0, () => 'pause grace');
    vi.advanceTimersByTime(3_000);

    expect(writes).toEqual(['Draining: 0/0  pause grace\n']);
  });
});
