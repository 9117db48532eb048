/**
 * A tenant's subscriptions, paged, never a secret: where each delivers, which event types it
 * takes, whether it is paused (and why), its parked backlog and its last delivery; with pause and resume. Opened
 * with `?subscription=…` (from a group's page), it finds the subscription's tenant first.
 */
import type { SubscriptionAnswer, SubscriptionsAnswer } from '../../../lambda/core/answers.js';
import type { RoutingView } from '../../../lambda/core/routing-settings.js';
import { api, segment } from '../api.js';
import { cell, code, el, link, replaceChildren, replaceKeepingFocus, table } from '../dom.js';
import { formatTime } from '../format.js';
import { every, REFRESH_MS, type Page } from '../page.js';
import { badge, errorBox, pager } from '../ui.js';
import { pauseButtons } from './group.js';

type Subscription = SubscriptionsAnswer['items'][number];

/** Why a subscription shows no last delivery: none yet, or no one group holds exactly its events. */
function noLastDelivery(subscription: Subscription, isPartitioned: boolean): string {
  if (subscription.ordering === 'resource') return 'per resource: see Lag';
  return isPartitioned ? 'partitioned: see Lag' : 'none yet';
}

function subscriptionRow(subscription: Subscription, highlighted: string | undefined, isPartitioned: boolean, refresh: () => void): HTMLTableRowElement {
  return el(
    'tr',
    { 'data-subscription': subscription.subscription_id, 'aria-current': subscription.subscription_id === highlighted ? 'true' : undefined },
    cell(code(subscription.subscription_id)),
    cell(code(subscription.url)),
    cell(subscription.event_types === null ? el('span', { class: 'muted' }, 'every type') : subscription.event_types.join(', ')),
    cell(subscription.batch_size),
    cell(subscription.ordering),
    cell(subscription.is_paused ? badge('paused', 'warn') : badge('delivering', 'good'), subscription.is_paused ? ` ${subscription.pause_reason ?? ''}` : null),
    cell(subscription.parked_groups),
    cell(subscription.last_delivered_at === null ? el('span', { class: 'muted' }, noLastDelivery(subscription, isPartitioned)) : formatTime(subscription.last_delivered_at)),
    cell(formatTime(subscription.created_at)),
    cell(
      el('div', { class: 'actions' }, pauseButtons(subscription.subscription_id, subscription.is_paused, refresh), link(`#/dead-letters?subscription=${encodeURIComponent(subscription.subscription_id)}`, 'Dead letters')),
    ),
  );
}

export const subscriptionsPage: Page = (main, request) => {
  const named = request.query.get('subscription') ?? undefined;
  let tenantId = request.query.get('tenant') ?? '';
  const input = el('input', { type: 'text', name: 'tenant', id: 'subscriptions-tenant', value: tenantId, required: true, autocomplete: 'off' });
  const form = el('form', { class: 'inline' }, el('label', { for: 'subscriptions-tenant' }, 'Tenant id', input), el('button', { type: 'submit' }, 'Show subscriptions'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = `#/subscriptions?tenant=${encodeURIComponent(input.value.trim())}`;
  });
  const body = el('div', {});
  replaceChildren(main, el('h1', {}, 'Subscriptions'), form, body);
  if (tenantId === '' && named === undefined) {
    body.appendChild(el('p', { class: 'muted' }, 'Name a tenant to list its subscriptions (the API lists them by tenant).'));
    return { stop: () => undefined };
  }
  const cursors: (string | undefined)[] = [undefined];
  const refresh = async (): Promise<void> => {
    try {
      if (tenantId === '' && named !== undefined) {
        tenantId = (await api.get<SubscriptionAnswer>(`/v1/subscriptions/${segment(named)}`)).tenant_id;
        input.value = tenantId;
      }
      const [answer, routing] = await Promise.all([api.get<SubscriptionsAnswer>('/v1/subscriptions', { tenant_id: tenantId, cursor: cursors.at(-1), limit: '50' }), api.get<RoutingView>('/v1/routing')]);
      const isPartitioned = routing.partition_count !== null;
      replaceKeepingFocus(
        body,
        answer.items.length === 0
          ? el('p', { 'data-testid': 'subscriptions-empty' }, `Tenant ${tenantId} has no subscriptions.`)
          : table(
              `Subscriptions of tenant ${tenantId}, page ${cursors.length}`,
              [
                { label: 'Subscription' },
                { label: 'URL' },
                { label: 'Event types' },
                { label: 'Batch size', isNumber: true },
                { label: 'Ordering' },
                { label: 'State' },
                { label: 'Parked groups', isNumber: true },
                { label: 'Last delivery' },
                { label: 'Created' },
                { label: 'Actions' },
              ],
              answer.items.map((subscription) => subscriptionRow(subscription, named, isPartitioned, view.refresh)),
            ),
        pager(cursors, answer.next_cursor, view.refresh),
      );
    } catch (error) {
      replaceChildren(body, errorBox('The subscriptions could not be read', error));
    }
  };
  const view = every(() => REFRESH_MS * 2, refresh);
  return view;
};
