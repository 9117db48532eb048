/**
 * The subscription store's change of `ordering` on dynalite: the mark a first PUT writes, read by
 * ingest's routing; the write that makes the change only under that very mark; the lift; and a
 * PUT naming the ordering in force giving the change up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSubscriptionStore, orderingChangeOf, SubscriptionPutKind, type SubscriptionStore } from '../../../lambda/adapters/subscription-store.js';
import { Ordering } from '../../../lambda/core/routing.js';
import { TABLES } from '../../../lambda/resources.js';
import { startDynaliteTables, type DynaliteTables } from '../support/dynalite.js';

let tables: DynaliteTables;
let store: SubscriptionStore;

beforeAll(async () => {
  tables = await startDynaliteTables();
  store = createSubscriptionStore(tables.dynamo, TABLES.subscriptions.localName);
});

afterAll(async () => {
  await tables.stop();
});

const at = '2026-12-08T10:00:00.000Z';
const mark = { ordering: Ordering.resource, startedAt: at };
let ids = 0;

async function created(): Promise<string> {
  const id = `sub_change_${(ids += 1)}`;
  await store.put({ subscription_id: id, tenant_id: 'acme', url: 'https://example.com/hook', secret: 'whsec_x', now: at });
  return id;
}

const base = (id: string) => ({ subscription_id: id, tenant_id: 'acme', url: 'https://example.com/new', secret: 'whsec_x', shouldKeepExistingSecret: true, now: at });

describe('the subscription store’s change of ordering', () => {
  it('marks a change begun, which ingest reads with the routing, only while the subscription is the tenant’s and ordered as read', async () => {
    const id = await created();
    expect(await store.beginOrderingChange({ subscriptionId: id, tenantId: 'other', from: Ordering.subscription, mark })).toBe(false);
    expect(await store.beginOrderingChange({ subscriptionId: id, tenantId: 'acme', from: Ordering.resource, mark })).toBe(false);
    expect(await store.beginOrderingChange({ subscriptionId: 'sub_none', tenantId: 'acme', from: Ordering.subscription, mark })).toBe(false);
    expect(await store.beginOrderingChange({ subscriptionId: id, tenantId: 'acme', from: Ordering.subscription, mark })).toBe(true);
    expect((await store.findRouting([id])).get(id)).toEqual({ tenantId: 'acme', ordering: Ordering.subscription, orderingChange: mark });
    const subscription = await store.get(id);
    expect(subscription === undefined ? undefined : orderingChangeOf(subscription)).toEqual(mark);
    // A PUT that names no ordering leaves the change under way.
    await store.put({ ...base(id), batch_size: 3 });
    expect((await store.findRouting([id])).get(id)?.orderingChange).toEqual(mark);
  });

  it('makes the change only under the very mark it was begun with, and removes it', async () => {
    const id = await created();
    await store.beginOrderingChange({ subscriptionId: id, tenantId: 'acme', from: Ordering.subscription, mark });
    expect(await store.put({ ...base(id), ordering: Ordering.resource, orderingChange: { ...mark, startedAt: '2026-12-08T09:00:00.000Z' } })).toEqual({ kind: SubscriptionPutKind.orderingChangeLost });
    expect(await store.get(id)).toMatchObject({ ordering: Ordering.subscription, url: 'https://example.com/hook' });
    expect(await store.put({ ...base(id), ordering: Ordering.resource, orderingChange: mark })).toMatchObject({ kind: 'replaced', subscription: { ordering: Ordering.resource } });
    expect((await store.findRouting([id])).get(id)).toEqual({ tenantId: 'acme', ordering: Ordering.resource });
    // Made once: the same PUT again finds no mark.
    expect(await store.put({ ...base(id), ordering: Ordering.resource, orderingChange: mark })).toEqual({ kind: SubscriptionPutKind.orderingChangeLost });
  });

  it('lifts only the mark it names, and a PUT naming the ordering in force gives the change up', async () => {
    const id = await created();
    await store.beginOrderingChange({ subscriptionId: id, tenantId: 'acme', from: Ordering.subscription, mark });
    await store.liftOrderingChange({ subscriptionId: id, mark: { ...mark, startedAt: '2026-12-08T09:00:00.000Z' } });
    expect((await store.findRouting([id])).get(id)?.orderingChange).toEqual(mark);
    await store.liftOrderingChange({ subscriptionId: id, mark });
    expect((await store.findRouting([id])).get(id)?.orderingChange).toBeUndefined();
    await store.liftOrderingChange({ subscriptionId: id, mark });

    await store.beginOrderingChange({ subscriptionId: id, tenantId: 'acme', from: Ordering.subscription, mark });
    await store.put({ ...base(id), ordering: Ordering.subscription });
    expect((await store.findRouting([id])).get(id)).toEqual({ tenantId: 'acme', ordering: Ordering.subscription });
  });
});
