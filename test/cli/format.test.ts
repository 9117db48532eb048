/**
 * The pure pieces of the output: durations both ways, and tables.
 */
import { describe, expect, it } from 'vitest';
import { formatMs, formatSeconds, parseDurationMs } from '../../cli/duration.js';
import { renderTable } from '../../cli/output/table.js';

describe('parseDurationMs', () => {
  it.each([
    ['90', 90_000],
    ['1.5', 1_500],
    ['90s', 90_000],
    ['15m', 900_000],
    ['1h30m', 5_400_000],
    ['500ms', 500],
    [' 2m ', 120_000],
    ['', undefined],
    ['m', undefined],
    ['5 m', undefined],
    ['-1s', undefined],
    ['1d', undefined],
  ])('reads %j as %s ms', (text, expected) => {
    expect(parseDurationMs(text)).toBe(expected);
  });
});

describe('formatSeconds', () => {
  it.each([
    [0, '0s'],
    [59.9, '59s'],
    [192, '3m12s'],
    [65, '1m05s'],
    [3_600, '1h00m'],
    [7_530, '2h05m'],
    [277_200, '3d05h'],
    [-4, '0s'],
  ])('writes %s s as %s', (seconds, expected) => {
    expect(formatSeconds(seconds)).toBe(expected);
  });

  it('writes milliseconds below one second', () => {
    expect(formatMs(60)).toBe('60ms');
    expect(formatMs(1_800_000)).toBe('30m00s');
  });
});

describe('renderTable', () => {
  it('pads columns, aligns numbers right, flattens and cuts long cells', () => {
    const rows = [
      { name: 'a', count: 5, note: 'short' },
      { name: 'longer name', count: 1234, note: 'line one\nline two that is long' },
    ];
    const table = renderTable(
      [
        { header: 'NAME', cell: (row: (typeof rows)[number]) => row.name },
        { header: 'N', cell: (row) => String(row.count), align: 'right' },
        { header: 'NOTE', cell: (row) => row.note, maxWidth: 12 },
      ],
      rows,
    );
    expect(table).toBe(['NAME            N  NOTE', 'a               5  short', 'longer name  1234  line one li…', ''].join('\n'));
  });
});
