import { describe, expect, it } from 'vitest';
import { count, fixed, formatTable, ratio, usd } from '../../../bench/format.js';

describe('formatTable', () => {
  it('pads text left and numbers right under a Markdown rule when the columns mix', () => {
    expect(formatTable(['K', 'name', 'events/s'], [['1', 'one', '23.5'], ['64', 'sixty-four', '—']])).toBe(
      ['|  K | name       | events/s |', '|---:|------------|---------:|', '|  1 | one        |     23.5 |', '| 64 | sixty-four |        — |'].join('\n'),
    );
  });

  it('keeps a column of numbers right-aligned when some of its cells are empty', () => {
    expect(formatTable(['x'], [['1.00×'], ['']])).toBe('|     x |\n|------:|\n| 1.00× |\n|       |');
  });

  it('prints the headers and rule alone when there are no rows', () => {
    expect(formatTable(['a', 'b'], [])).toBe('| a | b |\n|---|---|');
  });
});

describe('number formats', () => {
  it.each<[string, string, string]>([
    ['fixed', fixed(1.23456, 2), '1.23'],
    ['fixed of nothing', fixed(undefined, 2), '—'],
    ['fixed of infinity', fixed(Number.POSITIVE_INFINITY, 1), '—'],
    ['count', count(1234567.4), '1,234,567'],
    ['usd below 100', usd(4.836), '$4.84'],
    ['usd above 100', usd(196194.2), '$196,194'],
    ['ratio', ratio(30, 20), '1.50×'],
    ['ratio without a before', ratio(30, undefined), '—'],
    ['ratio over zero', ratio(30, 0), '—'],
  ])('formats %s', (_name, actual, expected) => {
    expect(actual).toBe(expected);
  });
});
