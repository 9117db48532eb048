import { describe, expect, it } from 'vitest';
import { nothingWaitsLine, waitingLine } from '../../../console/src/format.js';

describe('the group page’s sentences', () => {
  it('agrees the verb with how many events wait behind the head', () => {
    expect(waitingLine(1)).toMatch(/^1 event waits behind the head/);
    expect(waitingLine(3)).toMatch(/^3 events wait behind the head/);
    expect(waitingLine(0)).toMatch(/^0 events wait behind the head/);
  });

  it('does not call a group whose events were dead-lettered delivered', () => {
    expect(nothingWaitsLine(0)).toBe('Nothing waits: the group has delivered all it was given.');
    expect(nothingWaitsLine(2)).toBe('Nothing waits: the group has delivered or dead-lettered all it was given (2 dead letters, sent again by a redrive).');
  });
});
