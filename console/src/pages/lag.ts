/**
 * Lag: the message groups with pending or dead-lettered events, worst first (the API's order),
 * each beside its subscription and ordering key, with its rates: a stalled head, a paused
 * subscription and a key falling behind (a whale) stand out. Refreshed live, page by page.
 */
import type { LagAnswer } from '../../../lambda/core/answers.js';
import type { LagRow } from '../../../lambda/core/lag.js';
import { api } from '../api.js';
import { cell, code, el, link, replaceChildren, replaceKeepingFocus, table } from '../dom.js';
import { formatSeconds } from '../format.js';
import { every, REFRESH_MS, type Page } from '../page.js';
import { badge, errorBox, figure, pager } from '../ui.js';

/** The states a row shows, worst first. */
export function rowStates(row: LagRow): HTMLElement[] {
  return [
    row.head_attempts > 0 ? badge(`head failing ×${row.head_attempts}`, 'bad') : null,
    row.is_paused ? badge('paused', 'warn') : null,
    row.is_falling_behind ? badge('falling behind', 'warn') : null,
    row.dead_lettered > 0 ? badge(`${row.dead_lettered} dead-lettered`, 'bad') : null,
  ].filter((state): state is HTMLSpanElement => state !== null);
}

export function groupHash(messageGroupId: string): string {
  return `#/groups/${encodeURIComponent(messageGroupId)}`;
}

function lagRow(row: LagRow): HTMLTableRowElement {
  return el(
    'tr',
    { class: row.head_attempts > 0 ? 'stalled' : row.is_paused ? 'held' : undefined, 'data-group': row.message_group_id },
    cell(link(groupHash(row.message_group_id), code(row.message_group_id))),
    cell(row.subscription_id === null ? '—' : code(row.subscription_id)),
    cell(row.ordering_key === null ? el('span', { class: 'muted' }, `${row.keys_affected} keys`) : code(row.ordering_key)),
    cell(row.depth),
    cell(formatSeconds(row.oldest_wait_seconds)),
    cell(row.head_attempts),
    cell(row.last_error ?? '—'),
    cell(`${row.accepted_per_minute} / ${row.delivered_per_minute}`),
    cell(...rowStates(row)),
  );
}

export const lagPage: Page = (main) => {
  const figures = el('ul', { class: 'figures' });
  const body = el('div', {}, el('p', {}, 'Reading the lag view…'));
  const pagerBox = el('div', {});
  replaceChildren(
    main,
    el('h1', {}, 'Lag'),
    el('p', { class: 'muted' }, 'Groups with pending or dead-lettered events, worst first: the longest wait, then the most attempts on the head. Refreshed every few seconds.'),
    figures,
    body,
    pagerBox,
  );
  // The page being read: its cursor (none for the first), and the ones before it for "Previous".
  const cursors: (string | undefined)[] = [undefined];
  const refresh = async (): Promise<void> => {
    try {
      const answer = await api.get<LagAnswer>('/v1/lag', { limit: '50', cursor: cursors.at(-1) });
      const stalled = answer.groups.filter((row) => row.head_attempts > 0).length;
      replaceChildren(
        figures,
        figure('groups on this page', answer.groups.length),
        figure('with a failing head', stalled, stalled > 0, 'lag-stalled'),
        figure('oldest wait', formatSeconds(Math.max(0, ...answer.groups.map((row) => row.oldest_wait_seconds)))),
      );
      replaceKeepingFocus(
        body,
        answer.groups.length === 0
          ? el('p', { 'data-testid': 'lag-empty' }, 'Nothing is waiting: every group has delivered all it was given.')
          : table(
              'Message groups, worst first',
              [
                { label: 'Group' },
                { label: 'Subscription' },
                { label: 'Ordering key' },
                { label: 'Depth', isNumber: true },
                { label: 'Oldest wait' },
                { label: 'Head attempts', isNumber: true },
                { label: 'Last error' },
                { label: 'Accepted / delivered per min' },
                { label: 'State' },
              ],
              answer.groups.map(lagRow),
            ),
      );
      replaceKeepingFocus(pagerBox, pager(cursors, answer.next_cursor, view.refresh));
    } catch (error) {
      replaceChildren(body, errorBox('The lag view could not be read', error));
    }
  };
  const view = every(() => REFRESH_MS, refresh);
  return view;
};
