/**
 * The planted bugs of `npm run mutate` still apply to the code as it is: a refactor that moves a
 * patch's text makes this red, instead of a mutation run that changes nothing and calls it caught.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { applyPatch, PLANTED_BUGS } from './planted-bugs.js';

describe('planted bugs', () => {
  it.each(PLANTED_BUGS.map((bug) => [bug.name, bug] as const))('%s applies to the current source, each patch once', (_, bug) => {
    const sources = new Map<string, string>();
    for (const patch of bug.patches) {
      const source = sources.get(patch.file) ?? readFileSync(patch.file, 'utf8');
      const patched = applyPatch(source, patch);
      expect(patched).not.toBe(source);
      sources.set(patch.file, patched);
    }
  });

  it('names each bug once and gives each seeds to run', () => {
    expect(new Set(PLANTED_BUGS.map((bug) => bug.name)).size).toBe(PLANTED_BUGS.length);
    for (const bug of PLANTED_BUGS) expect(bug.catchers.seeds.length, bug.name).toBeGreaterThan(0);
  });
});

describe('applyPatch', () => {
  const patch = { file: 'f.ts', find: 'a + b', replace: 'a - b' };

  it('replaces the text when it occurs once', () => {
    expect(applyPatch('const c = a + b;', patch)).toBe('const c = a - b;');
  });

  it('throws when the text is not there any more', () => {
    expect(() => applyPatch('const c = b + a;', patch)).toThrow(/not there any more/);
  });

  it('throws when the text occurs more than once', () => {
    expect(() => applyPatch('a + b; a + b;', patch)).toThrow(/more than once/);
  });
});
