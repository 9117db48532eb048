import { describe, expect, it } from 'vitest';
import { judge, MAX_LISTED_NUMBERS, Verdict, type KeyState, type Place } from '../../receiver/src/index.js';

const first = (sequence: number, previousSequence: number): Place => ({ sequence, previousSequence, isRedelivery: false });
const redelivered = (sequence: number, previousSequence: number): Place => ({ sequence, previousSequence, isRedelivery: true });

/** Judges a key's events one after another, from nothing kept: each report, and the state at the end. */
function judgeAll(places: readonly Place[]): { readonly reports: string[]; readonly state: KeyState | undefined } {
  let state: KeyState | undefined;
  const reports = places.map((place) => {
    const { report, next } = judge(state, place);
    state = next;
    return [report.verdict, ...(report.missing.length > 0 ? [`missing ${report.missing.join(',')}`] : []), ...(report.lost.length > 0 ? [`lost ${report.lost.join(',')}`] : [])].join(' ');
  });
  return { reports, state };
}

describe('judge', () => {
  it('takes 1, 2, 3 in order', () => {
    expect(judgeAll([first(1, 0), first(2, 1), first(3, 2)])).toEqual({ reports: ['in_order', 'in_order', 'in_order'], state: { last: 3, missing: [] } });
  });

  it('reports a gap of dead letters, then fills it with their redeliveries, in any order', () => {
    const { reports, state } = judgeAll([first(1, 0), first(4, 1), first(5, 4), redelivered(3, 5), redelivered(2, 5)]);
    expect(reports).toEqual(['in_order', 'gap missing 2,3', 'in_order', 'redelivery', 'redelivery']);
    expect(state).toEqual({ last: 5, missing: [] });
  });

  it('tells deliveries it lost from dead letters: previous_sequence above the last number taken', () => {
    const { reports, state } = judgeAll([first(1, 0), first(5, 3)]);
    expect(reports).toEqual(['in_order', 'gap missing 4 lost 2,3']);
    expect(state).toEqual({ last: 5, missing: [[2, 4]] });
  });

  it('reports a number taken before as a duplicate, a retry or a replay alike, and keeps the state', () => {
    const { reports, state } = judgeAll([first(1, 0), first(2, 1), first(2, 1), redelivered(1, 2)]);
    expect(reports).toEqual(['in_order', 'in_order', 'duplicate', 'duplicate']);
    expect(state).toEqual({ last: 2, missing: [] });
  });

  it('reports a redelivery filled once: the same redelivery again is a duplicate', () => {
    expect(judgeAll([first(2, 0), redelivered(1, 2), redelivered(1, 2)]).reports).toEqual(['gap missing 1', 'redelivery', 'duplicate']);
  });

  it('starts a key it never saw from its previous_sequence: what came before was before its time', () => {
    expect(judgeAll([first(57, 56), first(58, 57)]).reports).toEqual(['in_order', 'in_order']);
    expect(judgeAll([first(57, 55)]).reports).toEqual(['gap missing 56']);
    expect(judgeAll([first(1, 0)]).state).toEqual({ last: 1, missing: [] });
  });

  it('takes the redelivery of the key’s last number, given up with nothing after it, as the next number', () => {
    // 2 was given up as the key's last event, redriven before 3 existed: its previous is 1.
    expect(judgeAll([first(1, 0), redelivered(2, 1), first(3, 1)]).reports).toEqual(['in_order', 'redelivery', 'in_order']);
  });

  it('keeps a run of dead letters as one range, and splits it as redeliveries fill it', () => {
    const { state } = judgeAll([first(1, 0), first(10, 1), redelivered(5, 10)]);
    expect(state).toEqual({ last: 10, missing: [[2, 4], [6, 9]] });
  });

  it(`lists at most ${MAX_LISTED_NUMBERS} numbers of a long gap, and keeps all of it`, () => {
    const { report, next } = judge({ last: 1, missing: [] }, first(5_002, 1));
    expect(report.verdict).toBe(Verdict.gap);
    expect(report.missing).toHaveLength(MAX_LISTED_NUMBERS);
    expect(report.missing[0]).toBe(2);
    expect(next.missing).toEqual([[2, 5_001]]);
  });
});

describe('judge, a redelivery above the last number taken', () => {
  it('reports what it skipped as missing, never lost: its previous_sequence is the key’s, not its own', () => {
    // A replay into a store that kept nothing past 58: 61 comes with the key's last delivered, 70.
    const { report, next } = judge({ last: 58, missing: [] }, { sequence: 61, previousSequence: 70, isRedelivery: true });
    expect(report).toEqual({ verdict: Verdict.redelivery, missing: [59, 60], lost: [] });
    expect(next).toEqual({ last: 61, missing: [[59, 60]] });
  });
});
