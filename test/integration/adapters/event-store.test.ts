/**
 * The event store's record on dynalite, as a replay reads it: the key an event was settled under
 * stays its key when a resend records a copy under another (a change of ordering between the first
 * request, which failed after its send, and the resend).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventStore, type EventStore } from '../../../lambda/adapters/event-store.js';
import type { QueuedEvent } from '../../../lambda/core/event.js';
import { TABLES } from '../../../lambda/resources.js';
import { startDynaliteTables, type DynaliteTables } from '../support/dynalite.js';

let tables: DynaliteTables;
let events: EventStore;

beforeAll(async () => {
  tables = await startDynaliteTables();
  events = createEventStore(tables.dynamo, { tableName: TABLES.events.localName, ttlDays: 30 });
});

afterAll(async () => {
  await tables.stop();
});

const at = '2026-12-08T10:00:00.000Z';

function queued(eventId: string, orderingKey: string): QueuedEvent {
  return {
    version: 1,
    event: { event_id: eventId, tenant_id: 't', subscription_id: 'sub_a', type: 'x', payload_json: '{}' },
    ordering_key: orderingKey,
    message_group_id: `g-${orderingKey}`,
    accepted_at: at,
  };
}

const accepted = (eventId: string, orderingKey: string, queuePosition: string) => ({ eventId, subscriptionId: 'sub_a', tenantId: 't', orderingKey, messageGroupId: `g-${orderingKey}`, acceptedAt: at, queuePosition });

describe('the event store’s record of a key', () => {
  it('keeps the key an event was delivered under when a resend records its copy under another', async () => {
    await events.markDelivered({ queued: queued('e-resent', 'sub_a'), sequence: 1, attempts: 1, at });
    await events.recordAccepted(accepted('e-resent', '["sub_a","r1"]', 'g-r1/0002'));
    expect((await events.readOutcomes(['e-resent'])).get('e-resent')).toEqual({ status: 'delivered', sequence: 1, queuePosition: 'g-r1/0002', giveUp: undefined, orderingKey: 'sub_a' });
  });

  it('records the key ingest gives, which the consumer settles under', async () => {
    await events.recordAccepted(accepted('e-first', 'sub_a', 'g-sub_a/0001'));
    expect((await events.readOutcomes(['e-first'])).get('e-first')).toMatchObject({ status: 'accepted', orderingKey: 'sub_a' });
    await events.markDelivered({ queued: queued('e-first', 'sub_a'), sequence: 2, attempts: 1, at });
    expect((await events.readOutcomes(['e-first'])).get('e-first')).toEqual({ status: 'delivered', sequence: 2, queuePosition: 'g-sub_a/0001', giveUp: undefined, orderingKey: 'sub_a' });
  });
});
