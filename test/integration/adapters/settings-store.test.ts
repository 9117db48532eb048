/**
 * The Settings adapter on dynalite: the versioned routing and the pause of a drain-and-switch.
 * The store has one item, so each test starts its own dynalite (in memory, a few milliseconds).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSettingsStore, type SettingsStore } from '../../../lambda/adapters/settings-store.js';
import { TABLES } from '../../../lambda/resources.js';
import { startDynaliteTables, type DynaliteTables } from '../support/dynalite.js';

const DEPLOYED_PARTITIONS = 8;
const T1 = '2026-12-02T12:01:00.000Z';
const T2 = '2026-12-02T12:02:00.000Z';

let tables: DynaliteTables;
let store: SettingsStore;

beforeEach(async () => {
  tables = await startDynaliteTables();
  store = createSettingsStore(tables.dynamo, TABLES.settings.localName, DEPLOYED_PARTITIONS);
});

afterEach(async () => {
  await tables.stop();
});

describe('createSettingsStore on dynalite', () => {
  it('answers the deployment routing, unpaused at version 0, before anything is written', async () => {
    expect(await store.getRouting()).toEqual({ version: 0, partitionCount: DEPLOYED_PARTITIONS, isPaused: false, pausedAt: undefined });
  });

  it('pauses keeping the first pause time, and resumes forgetting it, without changing the routing', async () => {
    expect(await store.setPaused(true, T1)).toEqual({ version: 0, partitionCount: DEPLOYED_PARTITIONS, isPaused: true, pausedAt: T1 });
    expect(await store.setPaused(true, T2)).toMatchObject({ isPaused: true, pausedAt: T1 });
    expect(await store.getRouting()).toMatchObject({ isPaused: true, pausedAt: T1 });
    expect(await store.setPaused(false, T2)).toEqual({ version: 0, partitionCount: DEPLOYED_PARTITIONS, isPaused: false, pausedAt: undefined });
  });

  it('refuses a switch while not paused', async () => {
    expect(await store.switchRouting({ expectedVersion: 0, partitionCount: 4, at: T1 })).toBe(false);
    await store.setPaused(true, T1);
    await store.setPaused(false, T2);
    expect(await store.switchRouting({ expectedVersion: 0, partitionCount: 4, at: T2 })).toBe(false);
    expect(await store.getRouting()).toMatchObject({ version: 0, partitionCount: DEPLOYED_PARTITIONS });
  });

  it('switches once per version while paused, and stays paused', async () => {
    await store.setPaused(true, T1);
    expect(await store.switchRouting({ expectedVersion: 1, partitionCount: 4, at: T2 })).toBe(false);
    expect(await store.switchRouting({ expectedVersion: 0, partitionCount: 4, at: T2 })).toBe(true);
    expect(await store.switchRouting({ expectedVersion: 0, partitionCount: 16, at: T2 })).toBe(false);
    expect(await store.getRouting()).toEqual({ version: 1, partitionCount: 4, isPaused: true, pausedAt: T1 });
  });

  it('switches to one message group per key, and keeps the stored routing after a resume', async () => {
    await store.setPaused(true, T1);
    await store.switchRouting({ expectedVersion: 0, partitionCount: 4, at: T1 });
    expect(await store.switchRouting({ expectedVersion: 1, partitionCount: undefined, at: T2 })).toBe(true);
    expect(await store.setPaused(false, T2)).toEqual({ version: 2, partitionCount: undefined, isPaused: false, pausedAt: undefined });
  });
});
