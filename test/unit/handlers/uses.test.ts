/**
 * A handler's grants are the accesses of the adapter methods it declares (`uses`), and `pick`
 * makes every other method of the adapter uncallable. That holds only if the wiring takes each AWS
 * adapter through `pick`: a factory called bare would hand over every method, granted or not.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { HANDLER_ENTRIES } from '../../../lambda/routes.js';

const ADAPTERS_DIRECTORY = new URL('../../../lambda/adapters/', import.meta.url);

/**
 * Where a factory may be called: as the adapter `pick` takes methods from, or as the payload store
 * of the dead-letter store, whose own declared accesses include its calls on the bucket.
 */
const ALLOWED_BEFORE = [/pick\($/, /payloads:$/];

/** The factories of the adapters that declare an access map (`*_ACCESS`): those whose calls need IAM. */
let factories: string[] = [];
beforeAll(async () => {
  const modules = await Promise.all(
    readdirSync(ADAPTERS_DIRECTORY)
      .filter((file) => file.endsWith('.ts'))
      .map(async (file): Promise<Record<string, unknown>> => import(new URL(file, ADAPTERS_DIRECTORY).href)),
  );
  factories = modules
    .map((module) => Object.keys(module))
    .filter((names) => names.some((name) => name.endsWith('_ACCESS')))
    .flatMap((names) => names.filter((name) => /^create[A-Z]/.test(name)));
});

describe('handler wiring', () => {
  it('finds the factory of each adapter with an access map', () => {
    expect(factories).toEqual(expect.arrayContaining(['createDeliveryQueue', 'createDeadLetterStore', 'createPayloadBucket', 'createGroupStore']));
  });

  it.each(Object.values(HANDLER_ENTRIES))('%s takes every AWS adapter it wires through pick', (entry) => {
    const source = readFileSync(new URL(`../../../${entry}`, import.meta.url), 'utf8');
    const bare = [...source.matchAll(new RegExp(String.raw`\b(${factories.join('|')})\(`, 'g'))]
      .filter((match) => !ALLOWED_BEFORE.some((allowed) => allowed.test(source.slice(0, match.index).trimEnd())))
      .map((match) => `${match[1]} at offset ${match.index}`);
    expect(bare).toEqual([]);
  });
});
