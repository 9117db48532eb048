import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SubscriptionPutKind, type Subscription, type SubscriptionStore } from '../../../lambda/adapters/subscription-store.js';
import type { GroupLag } from '../../../lambda/core/lag.js';
import { groupLag } from '../../support/group-lag.js';
import { messageGroupIdFor } from '../../../lambda/core/routing.js';
import { ORDERING_CHANGE_WINDOW_SECONDS } from '../../../lambda/core/ordering-change.js';
import { checkEndpoint } from '../../../lambda/adapters/endpoint-check.js';
import { createLogger } from '../../../lambda/handlers/logger.js';
import { createSubscriptionsHandler } from '../../../lambda/handlers/subscriptions.js';
import { apiEvent, jsonOf } from '../../support/api-event.js';

function setup(allowPrivateEndpoints: boolean, orderingChangeWaitSeconds = 0) {
  const items = new Map<string, Subscription>();
  const activeGroups: GroupLag[] = [];
  const store: SubscriptionStore = {
    get: async (id) => items.get(id),
    // As the table's one conditional write: another tenant's id is refused, a kept secret stays, and
    // so do settings not given; a change of ordering is made only under its mark, and a PUT naming
    // an ordering removes any mark.
    put: async ({ now, shouldKeepExistingSecret = false, batch_size, ordering, event_types, orderingChange, ...fields }) => {
      const previous = items.get(fields.subscription_id);
      if (previous !== undefined && previous.tenant_id !== fields.tenant_id) return { kind: SubscriptionPutKind.tenantMismatch };
      if (orderingChange !== undefined && (previous?.ordering_change_to !== orderingChange.ordering || previous.ordering_change_at !== orderingChange.startedAt)) return { kind: SubscriptionPutKind.orderingChangeLost };
      const secret = shouldKeepExistingSecret && previous !== undefined ? previous.secret : fields.secret;
      const { ordering_change_to: changeTo, ordering_change_at: changeAt, event_types: _types, ...kept } = previous ?? {};
      const subscription: Subscription = {
        ...kept,
        ...fields,
        ...(ordering === undefined && changeTo !== undefined && changeAt !== undefined ? { ordering_change_to: changeTo, ordering_change_at: changeAt } : {}),
        secret,
        batch_size: batch_size ?? previous?.batch_size ?? 1,
        ordering: ordering ?? previous?.ordering ?? 'subscription',
        ...(event_types === null ? {} : event_types !== undefined ? { event_types: [...event_types] } : previous?.event_types === undefined ? {} : { event_types: previous.event_types }),
        created_at: previous?.created_at ?? now,
      };
      items.set(fields.subscription_id, subscription);
      return { kind: previous === undefined ? SubscriptionPutKind.created : SubscriptionPutKind.replaced, subscription };
    },
    beginOrderingChange: async ({ subscriptionId, tenantId, from, mark }) => {
      const current = items.get(subscriptionId);
      if (current?.tenant_id !== tenantId || current.ordering !== from) return false;
      items.set(subscriptionId, { ...current, ordering_change_to: mark.ordering, ordering_change_at: mark.startedAt });
      return true;
    },
    liftOrderingChange: async ({ subscriptionId, mark }) => {
      const current = items.get(subscriptionId);
      if (current?.ordering_change_to !== mark.ordering || current.ordering_change_at !== mark.startedAt) return;
      const { ordering_change_to: _to, ordering_change_at: _at, ...rest } = current;
      items.set(subscriptionId, rest);
    },
    // As the table's conditional rotation: the current secret becomes the previous one.
    rotateSecret: async ({ subscriptionId, secret: newSecret, previousSecretExpiresAt }) => {
      const current = items.get(subscriptionId);
      if (current === undefined) return false;
      items.set(subscriptionId, { ...current, secret: newSecret, previous_secret: current.secret, previous_secret_expires_at: previousSecretExpiresAt });
      return true;
    },
    findRouting: async () => new Map(),
    findTenantSubscriptions: async () => new Map(),
    // As the tenant index: the tenant's subscriptions in the order of their ids, after the position.
    list: async ({ tenantId, after, limit }) => {
      const all = [...items.values()].filter((item) => item.tenant_id === tenantId && (after === undefined || item.subscription_id > after)).sort((a, b) => (a.subscription_id < b.subscription_id ? -1 : 1));
      const page = all.slice(0, limit);
      return { items: page, next: all.length > limit ? page.at(-1)?.subscription_id : undefined };
    },
    // As the table's conditional updates: a pause in force is kept, a resume ends it.
    pause: async ({ subscriptionId, reason, now }) => {
      const current = items.get(subscriptionId);
      if (current === undefined) return undefined;
      const paused: Subscription = { ...current, paused_at: current.paused_at ?? now, pause_reason: current.pause_reason ?? reason };
      items.set(subscriptionId, paused);
      return paused;
    },
    resume: async ({ subscriptionId, now }) => {
      const current = items.get(subscriptionId);
      if (current === undefined) return undefined;
      const { paused_at: _pausedAt, pause_reason: _reason, ...rest } = current;
      const resumed: Subscription = { ...rest, resumed_at: now };
      items.set(subscriptionId, resumed);
      return resumed;
    },
  };
  const letGo: string[] = [];
  const forgotten: string[] = [];
  const unparked: { readonly subscriptionId: string; readonly groups: readonly string[] }[] = [];
  const partitionCount: { value: number | undefined } = { value: undefined };
  let clock = Date.parse('2026-12-02T12:00:00Z');
  const handler = createSubscriptionsHandler({
    store,
    checkEndpoint: (url) => checkEndpoint(url, allowPrivateEndpoints),
    listActiveGroups: async () => activeGroups,
    getGroup: async (messageGroupId) => activeGroups.find((group) => group.messageGroupId === messageGroupId),
    readGroups: async (ids) => new Map(activeGroups.filter((group) => ids.includes(group.messageGroupId)).map((group) => [group.messageGroupId, group])),
    partitionCount: async () => partitionCount.value,
    consumerTimeoutSeconds: 130,
    orderingChangeWaitSeconds,
    holds: {
      letGo: async (handles) => {
        letGo.push(...handles);
        return handles.length;
      },
      forgetHold: async (messageGroupId, receiptHandle) => {
        forgotten.push(`${messageGroupId}:${receiptHandle}`);
      },
    },
    unpark: async (subscriptionId, marks) => {
      unparked.push({ subscriptionId, groups: [...marks.keys()] });
      return { sent: marks.size * 3, ended: 0, isSent: false };
    },
    randomBytes,
    now: () => new Date((clock += 1000)),
    logger: createLogger('test', 'SILENT'),
  });
  const put = (id: string, body: unknown) =>
    handler(apiEvent({ routeKey: 'PUT /v1/subscriptions/{subscription_id}', pathParameters: { subscription_id: id }, body: typeof body === 'string' ? body : JSON.stringify(body) }));
  const get = (id: string) => handler(apiEvent({ routeKey: 'GET /v1/subscriptions/{subscription_id}', pathParameters: { subscription_id: id } }));
  const rotate = (id: string, body?: unknown) =>
    handler(
      apiEvent({
        routeKey: 'POST /v1/subscriptions/{subscription_id}/secret/rotate',
        pathParameters: { subscription_id: id },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      }),
    );
  const pause = (id: string, body?: unknown) =>
    handler(
      apiEvent({
        routeKey: 'POST /v1/subscriptions/{subscription_id}/pause',
        pathParameters: { subscription_id: id },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      }),
    );
  const resume = (id: string) => handler(apiEvent({ routeKey: 'POST /v1/subscriptions/{subscription_id}/resume', pathParameters: { subscription_id: id } }));
  const beginChange = (id: string, body: unknown) =>
    handler(apiEvent({ routeKey: 'POST /v1/subscriptions/{subscription_id}/ordering-change', pathParameters: { subscription_id: id }, body: typeof body === 'string' ? body : JSON.stringify(body) }));
  /** A change of ordering made with no race: begun, then the PUT once the wait is over. */
  const changeOrdering = async (id: string, body: Readonly<Record<string, unknown>> & { readonly ordering: string }) => {
    expect((await beginChange(id, { ordering: body.ordering })).statusCode).toBe(202);
    clock += orderingChangeWaitSeconds * 1000;
    return put(id, body);
  };
  const advance = (seconds: number) => {
    clock += seconds * 1000;
  };
  const list = (query: Record<string, string>) => handler({ ...apiEvent({ routeKey: 'GET /v1/subscriptions' }), queryStringParameters: query });
  return { items, activeGroups, put, beginChange, changeOrdering, advance, get, rotate, pause, resume, list, letGo, forgotten, partitionCount, unparked };
}

const secret = 'whsec_' + Buffer.alloc(24, 3).toString('base64');

describe('subscriptions handler', () => {
  it('creates with 201 and a generated whsec_ secret, replaces with 200, and never returns the secret on GET', async () => {
    const { put, get } = setup(true);
    const created = await put('sub_1', { tenant_id: 't1', url: 'http://127.0.0.1:4000/hooks' });
    expect(created.statusCode).toBe(201);
    const body = jsonOf(created) as Record<string, string>;
    expect(body).toMatchObject({ subscription_id: 'sub_1', tenant_id: 't1', url: 'http://127.0.0.1:4000/hooks' });
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const replaced = await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks', secret });
    expect(replaced.statusCode).toBe(200);
    expect(jsonOf(replaced)).toMatchObject({ url: 'https://example.com/hooks' });
    // A secret the PUT was given is not answered back: reading it is GET …/secret, granted apart.
    expect(replaced.body).not.toContain('whsec_');

    const read = await get('sub_1');
    expect(read.statusCode).toBe(200);
    expect(jsonOf(read)).toEqual({ subscription_id: 'sub_1', tenant_id: 't1', url: 'https://example.com/hooks', batch_size: 1, ordering: 'subscription', event_types: null, created_at: '2026-12-02T12:00:01.000Z', is_paused: false, paused_at: null, pause_reason: null, replay: null, last_replay: null, parked_groups: 0, last_delivered_at: null, ordering_change: null });
    expect(read.body).not.toContain('whsec_');
  });

  it('answers when a subscription was last delivered from its own group, and null where no one group holds exactly its events', async () => {
    const { put, get, list, activeGroups, partitionCount } = setup(true);
    const at = '2026-12-02T12:05:00.000Z';
    await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks' });
    await put('sub_2', { tenant_id: 't1', url: 'https://example.com/hooks', ordering: 'resource' });
    await put('sub_3', { tenant_id: 't1', url: 'https://example.com/hooks' });
    for (const id of ['sub_1', 'sub_2']) activeGroups.push(groupLag({ messageGroupId: messageGroupIdFor(id, undefined), lastDeliveredAt: at }));
    expect(jsonOf(await get('sub_1'))).toMatchObject({ last_delivered_at: at });
    // Ordered by resource: its key's group is not the subscription's; never delivered: none yet.
    const page = jsonOf(await list({ tenant_id: 't1' })) as { items: { subscription_id: string; last_delivered_at: string | null }[] };
    expect(page.items.map((item) => [item.subscription_id, item.last_delivered_at])).toEqual([['sub_1', at], ['sub_2', null], ['sub_3', null]]);
    // Partitioned: a group holds other subscriptions' events too.
    partitionCount.value = 4;
    expect(jsonOf(await get('sub_1'))).toMatchObject({ last_delivered_at: null });
  });

  it('keeps the existing secret when a PUT gives none, so that re-applying the same request keeps the receiver verifying', async () => {
    const { put, items } = setup(true);
    const request = { tenant_id: 't1', url: 'https://example.com/hooks' };
    const created = jsonOf(await put('sub_1', request)) as Record<string, string>;
    const again = await put('sub_1', request);
    expect(again.statusCode).toBe(200);
    // Kept, and not answered again: only a secret the PUT generated is.
    expect(jsonOf(again)).not.toHaveProperty('secret');
    expect(items.get('sub_1')?.secret).toBe(created.secret);

    // A given secret still replaces it, and a later PUT without one keeps the new one; neither answers it.
    expect(jsonOf(await put('sub_1', { ...request, secret }))).not.toHaveProperty('secret');
    const kept = await put('sub_1', { ...request, url: 'https://example.com/v2' });
    expect(jsonOf(kept)).toMatchObject({ url: 'https://example.com/v2' });
    expect(jsonOf(kept)).not.toHaveProperty('secret');
    expect(items.get('sub_1')?.secret).toBe(secret);
  });

  it('refuses a PUT of another tenant with 409 tenant_mismatch and changes nothing', async () => {
    const { put, items } = setup(true);
    await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks', secret });
    const before = items.get('sub_1');
    const result = await put('sub_1', { tenant_id: 't2', url: 'https://attacker.example/hooks' });
    expect(result.statusCode).toBe(409);
    expect(jsonOf(result)).toMatchObject({ error: { code: 'tenant_mismatch', details: [{ path: 'tenant_id' }] } });
    expect(result.body).not.toContain('whsec_');
    expect(items.get('sub_1')).toEqual(before);
  });

  it.each(['nope', 's'.repeat(129), ''])('answers 404 for a subscription that does not exist: %j', async (id) => {
    const { get } = setup(true);
    const result = await get(id);
    expect(result.statusCode).toBe(404);
    expect(jsonOf(result)).toMatchObject({ error: { code: 'not_found' } });
  });

  it.each([
    { name: 'a body that is not JSON', body: 'nope', code: 'invalid_json' },
    { name: 'a missing tenant_id', body: { url: 'https://example.com' }, code: 'invalid_request', path: 'tenant_id' },
    { name: 'an ftp url', body: { tenant_id: 't', url: 'ftp://example.com' }, code: 'invalid_request', path: 'url' },
    { name: 'a relative url', body: { tenant_id: 't', url: '/hooks' }, code: 'invalid_request', path: 'url' },
    { name: 'a url with a user and a password', body: { tenant_id: 't', url: 'https://user:pass@example.com/hooks' }, code: 'invalid_request', path: 'url' },
    { name: 'a url with a user', body: { tenant_id: 't', url: 'https://user@example.com/hooks' }, code: 'invalid_request', path: 'url' },
    { name: 'a secret without prefix', body: { tenant_id: 't', url: 'https://example.com', secret: Buffer.alloc(32).toString('base64') }, code: 'invalid_request', path: 'secret' },
    { name: 'a secret of 16 bytes', body: { tenant_id: 't', url: 'https://example.com', secret: 'whsec_' + Buffer.alloc(16).toString('base64') }, code: 'invalid_request', path: 'secret' },
    { name: 'an unknown field', body: { tenant_id: 't', url: 'https://example.com', urll: 'x' }, code: 'invalid_request' },
  ])('refuses $name with 400 $code and changes nothing', async ({ body, code, path }) => {
    const { put, items } = setup(true);
    const result = await put('sub_1', body);
    expect(result.statusCode).toBe(400);
    const json = jsonOf(result) as { error: { code: string; details?: { path: string }[] } };
    expect(json.error.code).toBe(code);
    if (path !== undefined) expect(json.error.details?.map((d) => d.path)).toContain(path);
    expect(items.size).toBe(0);
  });

  it('refuses a subscription id over 128 characters', async () => {
    const { put, items } = setup(true);
    const result = await put('s'.repeat(129), { tenant_id: 't', url: 'https://example.com' });
    expect(result.statusCode).toBe(400);
    expect(jsonOf(result)).toMatchObject({ error: { code: 'invalid_request', details: [{ path: 'subscription_id' }] } });
    expect(items.size).toBe(0);
  });

  it.each(['http://127.0.0.1:4000/', 'http://localhost:4000/', 'http://10.0.0.8/', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/', 'http://[fd00:ec2::254]/', 'http://[::a9fe:a9fe]/', 'http://[::169.254.169.254]/', 'http://[64:ff9b::a9fe:a9fe]/'])(
    'refuses %s with 422 endpoint_not_allowed when private endpoints are not allowed',
    async (url) => {
      const { put, items } = setup(false);
      const result = await put('sub_1', { tenant_id: 't', url });
      expect(result.statusCode).toBe(422);
      expect(jsonOf(result)).toMatchObject({ error: { code: 'endpoint_not_allowed', details: [{ path: 'url' }] } });
      expect(items.size).toBe(0);
    },
  );

  it('allows a public address literal when private endpoints are not allowed', async () => {
    const { put } = setup(false);
    expect((await put('sub_1', { tenant_id: 't', url: 'https://93.184.216.34/hooks' })).statusCode).toBe(201);
  });
});

describe('subscriptions handler delivery settings', () => {
  const pendingGroup = (orderingKey: string): GroupLag => ({
    messageGroupId: 'g1',
    depth: 2,
    oldestAcceptedAt: '2026-12-02T12:00:00.000Z',
    rateBuckets: {},
    headAttempts: undefined,
    lastError: undefined,
    headFailingSince: undefined,
    headEventId: undefined,
    headOrderingKey: undefined,
    orderingKey,
    deadLettered: 0,
    keysAffected: 1,
    orderingKeys: [orderingKey],
  });

  it('gives a new subscription the defaults, keeps stored settings on a PUT without them, and answers them on GET', async () => {
    const { put, changeOrdering, get } = setup(true);
    expect(jsonOf(await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks' }))).toMatchObject({ batch_size: 1, ordering: 'subscription' });
    expect(jsonOf(await changeOrdering('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks', batch_size: 10, ordering: 'resource' }))).toMatchObject({ batch_size: 10, ordering: 'resource' });
    expect(jsonOf(await put('sub_1', { tenant_id: 't1', url: 'https://example.com/other' }))).toMatchObject({ batch_size: 10, ordering: 'resource' });
    expect(jsonOf(await get('sub_1'))).toMatchObject({ url: 'https://example.com/other', batch_size: 10, ordering: 'resource' });
  });

  it('lists a tenant’s subscriptions a page at a time, in the order of their ids, as GET answers each, never a secret', async () => {
    const { put, get, list } = setup(true);
    for (const id of ['sub_c', 'sub_a', 'sub_b']) await put(id, { tenant_id: 't1', url: 'https://example.com/hooks', event_types: ['order.paid'] });
    await put('sub_other', { tenant_id: 't2', url: 'https://example.com/hooks' });
    const first = await list({ tenant_id: 't1', limit: '2' });
    expect(first.statusCode).toBe(200);
    const page = jsonOf(first) as { items: { subscription_id: string }[]; next_cursor: string | null };
    expect(page.items.map((item) => item.subscription_id)).toEqual(['sub_a', 'sub_b']);
    expect(page.items[0]).toEqual(jsonOf(await get('sub_a')));
    expect(first.body).not.toContain('whsec_');
    const second = jsonOf(await list({ tenant_id: 't1', limit: '2', cursor: page.next_cursor ?? '' })) as typeof page;
    expect([second.items.map((item) => item.subscription_id), second.next_cursor]).toEqual([['sub_c'], null]);
  });

  it.each([
    [{}, 'tenant_id'],
    [{ tenant_id: '' }, 'tenant_id'],
    [{ tenant_id: 't1', limit: '0' }, 'limit'],
    [{ tenant_id: 't1', cursor: 'not-ours!' }, 'cursor'],
  ])('refuses the list query %j with 400 naming %s', async (query, path) => {
    const { list } = setup(true);
    const answer = await list(query);
    expect(answer.statusCode).toBe(400);
    expect(jsonOf(answer)).toMatchObject({ error: { code: 'invalid_request', details: [{ path }] } });
  });

  it('takes every event type until event_types lists some, keeps the list on a PUT without it, and takes every type again with null', async () => {
    const { put, get } = setup(true);
    const base = { tenant_id: 't1', url: 'https://example.com/hooks' };
    expect(jsonOf(await put('sub_1', base))).toMatchObject({ event_types: null });
    expect(jsonOf(await put('sub_1', { ...base, event_types: ['order.paid', 'order.shipped'] }))).toMatchObject({ event_types: ['order.paid', 'order.shipped'] });
    expect(jsonOf(await put('sub_1', base))).toMatchObject({ event_types: ['order.paid', 'order.shipped'] });
    expect(jsonOf(await get('sub_1'))).toMatchObject({ event_types: ['order.paid', 'order.shipped'] });
    expect(jsonOf(await put('sub_1', { ...base, event_types: null }))).toMatchObject({ event_types: null });
    expect(jsonOf(await get('sub_1'))).toMatchObject({ event_types: null });
  });

  it.each([
    [{ event_types: [] }, 'event_types'],
    [{ event_types: ['a', 'a'] }, 'event_types'],
    [{ event_types: [''] }, 'event_types[0]'],
    [{ event_types: 'order.paid' }, 'event_types'],
    [{ event_types: Array.from({ length: 101 }, (_, n) => `t${n}`) }, 'event_types'],
    [{ batch_size: 0 }, 'batch_size'],
    [{ batch_size: 11 }, 'batch_size'],
    [{ batch_size: 2.5 }, 'batch_size'],
    [{ batch_size: '2' }, 'batch_size'],
    [{ ordering: 'tenant' }, 'ordering'],
    [{ ordering: null }, 'ordering'],
  ])('refuses %j with 400 naming the field, and changes nothing', async (field, path) => {
    const { put, items } = setup(true);
    const answer = await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks', ...field });
    expect(answer.statusCode).toBe(400);
    expect(jsonOf(answer)).toMatchObject({ error: { code: 'invalid_request', details: [{ path }] } });
    expect(items.size).toBe(0);
  });

  it('refuses a change of ordering with 409 ordering_change_pending while the subscription has events pending, and changes nothing', async () => {
    const { put, items, activeGroups } = setup(true);
    await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks' });
    activeGroups.push(pendingGroup('sub_1'));
    const answer = await put('sub_1', { tenant_id: 't1', url: 'https://example.com/new', ordering: 'resource' });
    expect(answer.statusCode).toBe(409);
    expect(jsonOf(answer)).toMatchObject({ error: { code: 'ordering_change_pending', details: [{ path: 'ordering', message: '2 pending events in 1 message group' }, { path: 'ordering' }] } });
    expect(items.get('sub_1')).toMatchObject({ url: 'https://example.com/hooks', ordering: 'subscription' });
  });

  it('also leaves no mark behind when it refuses a change for pending events', async () => {
    const { put, items, activeGroups } = setup(true);
    await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks' });
    activeGroups.push(pendingGroup('sub_1'));
    expect((await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks', ordering: 'resource' })).statusCode).toBe(409);
    expect(items.get('sub_1')?.ordering_change_at).toBeUndefined();
  });

  describe('a change of ordering begun first, then made by the PUT', () => {
    const WAIT = 60;
    const body = { tenant_id: 't1', url: 'https://example.com/new', ordering: 'resource', batch_size: 4 };

    it('begins with POST …/ordering-change: marks the change, changes nothing else, and answers when the PUT may make it', async () => {
      const { put, beginChange, items } = setup(true, WAIT);
      await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks' });
      const begun = await beginChange('sub_1', { ordering: 'resource' });
      expect(begun.statusCode).toBe(202);
      expect(begun.headers?.['retry-after']).toBe(String(WAIT));
      const startedAt = items.get('sub_1')?.ordering_change_at ?? '';
      expect(jsonOf(begun)).toEqual({
        subscription_id: 'sub_1',
        ordering: 'subscription',
        ordering_change: { ordering: 'resource', started_at: startedAt },
        make_after: new Date(Date.parse(startedAt) + WAIT * 1000).toISOString(),
        make_before: new Date(Date.parse(startedAt) + ORDERING_CHANGE_WINDOW_SECONDS * 1000).toISOString(),
      });
      expect(items.get('sub_1')).toMatchObject({ url: 'https://example.com/hooks', ordering: 'subscription', ordering_change_to: 'resource' });
      // Asked again: the same change, not a new one.
      const again = await beginChange('sub_1', { ordering: 'resource' });
      expect(jsonOf(again)).toMatchObject({ ordering_change: { started_at: startedAt } });
      expect(Number(again.headers?.['retry-after'])).toBeLessThan(WAIT);
    });

    it.each([
      ['the ordering in force', 'sub_1', { ordering: 'subscription' }, 400, 'invalid_request'],
      ['an unknown subscription', 'sub_none', { ordering: 'resource' }, 404, 'not_found'],
      ['another field', 'sub_1', { ordering: 'resource', url: 'https://example.com' }, 400, 'invalid_request'],
      ['an ordering that does not exist', 'sub_1', { ordering: 'event' }, 400, 'invalid_request'],
    ])('refuses to begin %s, writing nothing', async (_what, id, request, status, code) => {
      const { put, beginChange, items } = setup(true, WAIT);
      await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks' });
      const refused = await beginChange(id, request);
      expect(refused.statusCode).toBe(status);
      expect(jsonOf(refused)).toMatchObject({ error: { code } });
      expect(items.get('sub_1')?.ordering_change_at).toBeUndefined();
    });

    it('refuses to begin while the subscription has events pending, marking nothing', async () => {
      const { put, beginChange, items, activeGroups } = setup(true, WAIT);
      await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks' });
      activeGroups.push(pendingGroup('sub_1'));
      expect(jsonOf(await beginChange('sub_1', { ordering: 'resource' }))).toMatchObject({ error: { code: 'ordering_change_pending', details: [{ message: '2 pending events in 1 message group' }, {}] } });
      expect(items.get('sub_1')?.ordering_change_at).toBeUndefined();
    });

    it('refuses the PUT that comes before the wait is over, with the seconds left, and keeps the mark', async () => {
      const { put, beginChange, advance, items } = setup(true, WAIT);
      await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks' });
      await beginChange('sub_1', { ordering: 'resource' });
      const startedAt = items.get('sub_1')?.ordering_change_at;
      advance(30);
      const early = await put('sub_1', body);
      expect(early.statusCode).toBe(409);
      // 31 s after the mark by the handler's clock (each read of it ticks a second).
      expect(early.headers?.['retry-after']).toBe('29');
      expect(items.get('sub_1')).toMatchObject({ ordering: 'subscription', ordering_change_at: startedAt });
    });

    it('makes the change with the PUT after the wait: the new ordering and the rest of the body, and the mark gone', async () => {
      const { put, beginChange, advance, items } = setup(true, WAIT);
      await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks' });
      await beginChange('sub_1', { ordering: 'resource' });
      advance(WAIT);
      const made = await put('sub_1', body);
      expect(made.statusCode).toBe(200);
      expect(jsonOf(made)).toMatchObject({ ordering: 'resource', batch_size: 4, url: 'https://example.com/new' });
      expect(items.get('sub_1')?.ordering_change_at).toBeUndefined();
    });

    it('lifts the mark and answers the pending groups when events became pending meanwhile', async () => {
      const { put, beginChange, advance, items, activeGroups } = setup(true, WAIT);
      await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks' });
      await beginChange('sub_1', { ordering: 'resource' });
      activeGroups.push(pendingGroup('sub_1'));
      advance(WAIT);
      const refused = await put('sub_1', body);
      expect(jsonOf(refused)).toMatchObject({ error: { code: 'ordering_change_pending', details: [{ path: 'ordering', message: '2 pending events in 1 message group' }, { path: 'ordering' }] } });
      expect(items.get('sub_1')).toMatchObject({ ordering: 'subscription' });
      expect(items.get('sub_1')?.ordering_change_at).toBeUndefined();
    });

    it('changes at once with a PUT after the window, as without a mark, and a PUT naming the ordering in force gives a change up', async () => {
      const { put, beginChange, advance, items } = setup(true, WAIT);
      await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks' });
      await beginChange('sub_1', { ordering: 'resource' });
      expect((await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks', ordering: 'subscription' })).statusCode).toBe(200);
      expect(items.get('sub_1')?.ordering_change_at).toBeUndefined();
      await beginChange('sub_1', { ordering: 'resource' });
      advance(ORDERING_CHANGE_WINDOW_SECONDS);
      expect(jsonOf(await put('sub_1', body))).toMatchObject({ ordering: 'resource' });
      expect(items.get('sub_1')?.ordering_change_at).toBeUndefined();
    });

    it('refuses to make a change whose mark another request replaced meanwhile, and changes nothing', async () => {
      const { put, beginChange, advance, items } = setup(true, WAIT);
      await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks' });
      await beginChange('sub_1', { ordering: 'resource' });
      advance(WAIT);
      // Between this PUT's read and its write, another request gives the change up and begins it again.
      const current = items.get('sub_1');
      if (current === undefined) throw new Error('no subscription');
      const realGet = items.get.bind(items);
      let reads = 0;
      items.get = (id: string) => {
        reads += 1;
        return reads === 1 ? current : realGet(id);
      };
      items.set('sub_1', { ...current, ordering_change_at: '2026-12-02T12:30:00.000Z' });
      const lost = await put('sub_1', body);
      expect(jsonOf(lost)).toMatchObject({ error: { code: 'ordering_change_pending', message: expect.stringContaining('meanwhile') } });
      expect(realGet('sub_1')).toMatchObject({ ordering: 'subscription', url: 'https://example.com/hooks' });
    });
  });

  it('allows the same ordering, a batch_size change, or another subscription’s pending events', async () => {
    const { put, changeOrdering, activeGroups } = setup(true);
    await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks' });
    activeGroups.push(pendingGroup('sub_1'));
    expect((await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks', ordering: 'subscription', batch_size: 5 })).statusCode).toBe(200);
    await put('sub_2', { tenant_id: 't1', url: 'https://example.com/hooks' });
    expect(jsonOf(await changeOrdering('sub_2', { tenant_id: 't1', url: 'https://example.com/hooks', ordering: 'resource' }))).toMatchObject({ ordering: 'resource' });
  });
});

describe('subscriptions handler secret rotation', () => {
  const newSecret = 'whsec_' + Buffer.alloc(32, 5).toString('base64');

  it('generates a new secret, keeps the old one as previous for 24 hours, and never answers the old one', async () => {
    const { put, rotate, get, items } = setup(true);
    await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks', secret });
    const result = await rotate('sub_1');
    expect(result.statusCode).toBe(200);
    const body = jsonOf(result) as Record<string, string>;
    // The clock ticks a second per call: the PUT read 12:00:01, the rotation 12:00:02.
    expect(body).toEqual({ subscription_id: 'sub_1', secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/), previous_secret_expires_at: '2026-12-03T12:00:02.000Z' });
    expect(body.secret).not.toBe(secret);
    expect(result.body).not.toContain(secret);
    expect(items.get('sub_1')).toMatchObject({ secret: body.secret, previous_secret: secret, previous_secret_expires_at: '2026-12-03T12:00:02.000Z' });
    const read = await get('sub_1');
    expect(read.body).not.toContain('whsec_');
    expect(read.body).not.toContain('previous_secret');
  });

  it('takes the new secret and the grace from the body, 0 ending the old one at once', async () => {
    const { put, rotate, items } = setup(true);
    await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks', secret });
    const result = await rotate('sub_1', { secret: newSecret, grace_seconds: 0 });
    expect(result.statusCode).toBe(200);
    // The secret it was given is not answered back.
    expect(jsonOf(result)).toEqual({ subscription_id: 'sub_1', previous_secret_expires_at: '2026-12-02T12:00:02.000Z' });
    expect(items.get('sub_1')).toMatchObject({ secret: newSecret, previous_secret: secret });
  });

  it('answers 404 not_found for a subscription that does not exist, and creates nothing', async () => {
    const { rotate, items } = setup(true);
    const result = await rotate('nope', {});
    expect(result.statusCode).toBe(404);
    expect(jsonOf(result)).toMatchObject({ error: { code: 'not_found' } });
    expect(items.size).toBe(0);
  });

  it.each([
    { name: 'a body that is not JSON', body: 'nope', code: 'invalid_json' },
    { name: 'a secret without prefix', body: { secret: Buffer.alloc(32).toString('base64') }, code: 'invalid_request', path: 'secret' },
    { name: 'a secret of 16 bytes', body: { secret: 'whsec_' + Buffer.alloc(16).toString('base64') }, code: 'invalid_request', path: 'secret' },
    { name: 'a negative grace', body: { grace_seconds: -1 }, code: 'invalid_request', path: 'grace_seconds' },
    { name: 'a fractional grace', body: { grace_seconds: 1.5 }, code: 'invalid_request', path: 'grace_seconds' },
    { name: 'a grace over 7 days', body: { grace_seconds: 604_801 }, code: 'invalid_request', path: 'grace_seconds' },
    { name: 'a grace as a string', body: { grace_seconds: '60' }, code: 'invalid_request', path: 'grace_seconds' },
    { name: 'an unknown field', body: { key: newSecret }, code: 'invalid_request' },
    { name: 'an array', body: [], code: 'invalid_request' },
  ])('refuses $name with 400 $code and changes nothing', async ({ body, code, path }) => {
    const { put, rotate, items } = setup(true);
    await put('sub_1', { tenant_id: 't1', url: 'https://example.com/hooks', secret });
    const before = items.get('sub_1');
    const result = await rotate('sub_1', body);
    expect(result.statusCode).toBe(400);
    const json = jsonOf(result) as { error: { code: string; details?: { path: string }[] } };
    expect(json.error.code).toBe(code);
    if (path !== undefined) expect(json.error.details?.map((d) => d.path)).toContain(path);
    expect(items.get('sub_1')).toEqual(before);
  });

  it('refuses a subscription id over 128 characters with 400', async () => {
    const { rotate } = setup(true);
    const result = await rotate('s'.repeat(129));
    expect(result.statusCode).toBe(400);
    expect(jsonOf(result)).toMatchObject({ error: { code: 'invalid_request', details: [{ path: 'subscription_id' }] } });
  });
});

describe('pause and resume', () => {
  /** A hold made at `heldAt` (long before the handler's clock, 2026-12-02T12:00:0x, by default). */
  const hold = (subscriptionId: string, receiptHandle: string, heldAt = '2026-12-02T11:00:00.000Z'): GroupLag['hold'] => ({
    subscriptionId,
    receiptHandle,
    pausedAt: '2026-12-02T12:00:02.000Z',
    reason: 'r',
    heldAt,
    until: '2026-12-03T00:00:00.000Z',
  });
  const heldGroup = (messageGroupId: string, groupHold: GroupLag['hold']): GroupLag => groupLag({ messageGroupId, depth: 3, hold: groupHold });

  it('pauses once: a second pause answers the first, its time and reason unchanged, and GET shows it', async () => {
    const { put, pause, get } = setup(true);
    await put('sub_1', { tenant_id: 't1', url: 'http://127.0.0.1:4000/hooks' });
    const first = await pause('sub_1', { reason: 'receiver migration' });
    expect(first.statusCode).toBe(200);
    expect(jsonOf(first)).toEqual({ subscription_id: 'sub_1', is_paused: true, paused_at: '2026-12-02T12:00:02.000Z', pause_reason: 'receiver migration' });
    const second = await pause('sub_1');
    expect(jsonOf(second)).toEqual(jsonOf(first));
    expect(jsonOf(await get('sub_1'))).toMatchObject({ is_paused: true, paused_at: '2026-12-02T12:00:02.000Z', pause_reason: 'receiver migration' });
  });

  it('gives a pause without a reason the operator\'s', async () => {
    const { put, pause } = setup(true);
    await put('sub_1', { tenant_id: 't1', url: 'http://127.0.0.1:4000/hooks' });
    expect(jsonOf(await pause('sub_1'))).toMatchObject({ pause_reason: 'paused by an operator' });
  });

  it('refuses a reason that is not text of 1 to 256 characters, naming the field, and pauses nothing', async () => {
    const { put, pause, items } = setup(true);
    await put('sub_1', { tenant_id: 't1', url: 'http://127.0.0.1:4000/hooks' });
    for (const body of [{ reason: '' }, { reason: 'x'.repeat(257) }, { reason: 3 }, { why: 'x' }]) {
      const answer = await pause('sub_1', body);
      expect(answer.statusCode).toBe(400);
      expect(JSON.stringify(jsonOf(answer))).toMatch(/reason|why/);
    }
    expect((await pause('sub_1', '{')).statusCode).toBe(400);
    expect(items.get('sub_1')?.paused_at).toBeUndefined();
  });

  it('answers 404 for a pause or resume of no subscription, or of an id no PUT can create (as GET does)', async () => {
    const { pause, resume } = setup(true);
    expect(jsonOf(await pause('nobody'))).toMatchObject({ error: { code: 'not_found' } });
    for (const id of ['nobody', '', 'x'.repeat(129)]) {
      expect((await pause(id)).statusCode).toBe(404);
      expect((await resume(id)).statusCode).toBe(404);
    }
  });

  it('resumes by ending the pause and letting go the one group of a subscription ordered by subscription, read directly', async () => {
    const { put, pause, resume, get, activeGroups, letGo, forgotten } = setup(true);
    await put('sub_1', { tenant_id: 't1', url: 'http://127.0.0.1:4000/hooks' });
    await pause('sub_1');
    const own = messageGroupIdFor('sub_1', undefined);
    // Only the key's own group is read: another group held for it (none can be) is not looked for.
    activeGroups.push(heldGroup(own, hold('sub_1', 'rh-1')), heldGroup('g2', hold('sub_2', 'rh-2')), heldGroup('g4', hold('sub_1', 'rh-4')));
    const answer = await resume('sub_1');
    expect(answer.statusCode).toBe(200);
    expect(jsonOf(answer)).toEqual({ subscription_id: 'sub_1', is_paused: false, paused_at: null, pause_reason: null, resumed_at: '2026-12-02T12:00:03.000Z', released_groups: 1, unparked_events: 0 });
    expect(letGo).toEqual(['rh-1']);
    expect(forgotten).toEqual([`${own}:rh-1`]);
    expect(jsonOf(await get('sub_1'))).toMatchObject({ is_paused: false });
  });

  it('looks in its partition in partition mode, and lets go only a hold of its own there', async () => {
    const { put, pause, resume, activeGroups, letGo, partitionCount } = setup(true);
    partitionCount.value = 8;
    await put('sub_1', { tenant_id: 't1', url: 'http://127.0.0.1:4000/hooks' });
    await pause('sub_1');
    activeGroups.push(heldGroup(messageGroupIdFor('sub_1', 8), hold('sub_2', 'rh-other')));
    expect(jsonOf(await resume('sub_1'))).toMatchObject({ released_groups: 0 });
    activeGroups[0] = heldGroup(messageGroupIdFor('sub_1', 8), hold('sub_1', 'rh-own'));
    expect(jsonOf(await resume('sub_1'))).toMatchObject({ released_groups: 1 });
    expect(letGo).toEqual(['rh-own']);
  });

  it('lets go every group held for a subscription ordered by resource, and only those', async () => {
    const { put, pause, resume, activeGroups, letGo, forgotten } = setup(true);
    await put('sub_1', { tenant_id: 't1', url: 'http://127.0.0.1:4000/hooks', ordering: 'resource' });
    await pause('sub_1');
    activeGroups.push(heldGroup('g1', hold('sub_1', 'rh-1')), heldGroup('g2', hold('sub_2', 'rh-2')), heldGroup('g3', undefined), heldGroup('g4', hold('sub_1', 'rh-4')));
    expect(jsonOf(await resume('sub_1'))).toMatchObject({ released_groups: 2 });
    expect(letGo).toEqual(['rh-1', 'rh-4']);
    expect(forgotten).toEqual(['g1:rh-1', 'g4:rh-4']);
  });

  it('lets go a hold made within the consumer\'s timeout but keeps its record: the consumer may still apply it', async () => {
    const { put, changeOrdering, pause, resume, activeGroups, letGo, forgotten } = setup(true);
    await put('sub_1', { tenant_id: 't1', url: 'http://127.0.0.1:4000/hooks' });
    await pause('sub_1');
    // The handler's clock reads 12:00:06 at the resume; 130 s of consumer timeout before it is 11:57:56.
    await changeOrdering('sub_1', { tenant_id: 't1', url: 'http://127.0.0.1:4000/hooks', ordering: 'resource' });
    activeGroups.push(heldGroup('young', hold('sub_1', 'rh-young', '2026-12-02T11:59:00.000Z')), heldGroup('old', hold('sub_1', 'rh-old', '2026-12-02T11:57:00.000Z')));
    expect(jsonOf(await resume('sub_1'))).toMatchObject({ released_groups: 2 });
    expect(letGo).toEqual(['rh-young', 'rh-old']);
    expect(forgotten).toEqual(['old:rh-old']);
  });

  it('sends a parked backlog back on resume, each of its parked groups, and answers how many events went', async () => {
    const { put, pause, resume, get, items, unparked } = setup(true);
    await put('sub_1', { tenant_id: 't1', url: 'http://127.0.0.1:4000/hooks' });
    await pause('sub_1');
    const stored = items.get('sub_1');
    if (stored === undefined) throw new Error('sub_1 was not stored');
    items.set('sub_1', { ...stored, parked_groups: { g1: 'park-1', g2: 'park-2' } });
    expect(jsonOf(await get('sub_1'))).toMatchObject({ is_paused: true, parked_groups: 2 });
    expect(jsonOf(await resume('sub_1'))).toMatchObject({ is_paused: false, unparked_events: 6 });
    expect(unparked).toEqual([{ subscriptionId: 'sub_1', groups: ['g1', 'g2'] }]);
  });

  it('resumes without a step of sending back when nothing is parked', async () => {
    const { put, pause, resume, get, unparked } = setup(true);
    await put('sub_1', { tenant_id: 't1', url: 'http://127.0.0.1:4000/hooks' });
    await pause('sub_1');
    expect(jsonOf(await get('sub_1'))).toMatchObject({ parked_groups: 0 });
    expect(jsonOf(await resume('sub_1'))).toMatchObject({ unparked_events: 0 });
    expect(unparked).toEqual([]);
  });

  it('resumes a subscription that is not paused as a no-op that still lets go what is held for it', async () => {
    const { put, resume, activeGroups, letGo } = setup(true);
    await put('sub_1', { tenant_id: 't1', url: 'http://127.0.0.1:4000/hooks' });
    expect(jsonOf(await resume('sub_1'))).toMatchObject({ is_paused: false, released_groups: 0 });
    activeGroups.push(heldGroup(messageGroupIdFor('sub_1', undefined), hold('sub_1', 'rh-1')));
    expect(jsonOf(await resume('sub_1'))).toMatchObject({ is_paused: false, released_groups: 1 });
    expect(letGo).toEqual(['rh-1']);
  });
});
