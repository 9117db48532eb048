/**
 * One message group: its head (the event its key waits on, with its attempts and last error),
 * how many events wait behind it, its dead letters and rates; and the operator's actions on it:
 * skip the failing head, pause or resume its subscription. Each asks first, naming exactly what
 * will happen; a group that changed meanwhile answers 409, shown in the API's words.
 */
import type { GroupAnswer, PauseAnswer, ResumeAnswer, SkipAnswer } from '../../../lambda/core/answers.js';
import type { LagRow } from '../../../lambda/core/lag.js';
import { api, segment } from '../api.js';
import { code, el, link, replaceChildren, replaceKeepingFocus, type Child } from '../dom.js';
import { formatSeconds, formatTime, nothingWaitsLine, plural, waitingLine } from '../format.js';
import { every, REFRESH_MS, type Page } from '../page.js';
import { confirmAction, describeFailure, errorBox, notify } from '../ui.js';
import { rowStates } from './lag.js';

function facts(entries: readonly (readonly [string, Child])[]): HTMLDListElement {
  return el('dl', { class: 'facts' }, ...entries.flatMap(([term, value]) => [el('dt', {}, term), el('dd', {}, value)]));
}

/** Runs an action, then says what it did or why it was refused, and reads the page again. */
export async function act(run: () => Promise<string>, refresh: () => void): Promise<void> {
  try {
    notify(await run());
  } catch (error) {
    notify(describeFailure(error), true);
  }
  refresh();
}

async function skipHead(row: LagRow, eventId: string): Promise<string | undefined> {
  const waiting = Math.max(0, row.depth - 1);
  const isConfirmed = await confirmAction({
    title: 'Skip the head?',
    body: [
      el('p', {}, 'Event ', code(eventId), ' of key ', code(row.ordering_key ?? '(unknown)'), ` is dead-lettered at its next retry, after ${plural(row.head_attempts, 'failed attempt')}.`),
      `The key then moves on to the ${plural(waiting, 'event')} waiting behind it, in order. The event keeps its sequence number: a redrive of the subscription's dead letters sends it again later.`,
      'If another event is the head by then, nothing is skipped and the console says so.',
    ],
    confirmLabel: `Skip ${eventId}`,
    isDanger: true,
  });
  if (!isConfirmed) return undefined;
  const answer = await api.post<SkipAnswer>(`/v1/groups/${segment(row.message_group_id)}/skip`, { event_id: eventId });
  return `Skip requested: ${answer.event_id} is dead-lettered at its next retry, and its key moves on.`;
}

async function pause(subscriptionId: string): Promise<string | undefined> {
  const reason = el('input', { type: 'text', name: 'reason', maxlength: 256, placeholder: 'e.g. receiver migration' });
  const isConfirmed = await confirmAction({
    title: `Pause ${subscriptionId}?`,
    body: [
      el('p', {}, 'Nothing of subscription ', code(subscriptionId), ' is attempted until it is resumed: its groups are held where they are.'),
      'Its events are still accepted, and wait in their order. No event is dead-lettered for the pause.',
    ],
    extra: el('label', {}, 'Reason (shown in the lag view; optional)', reason),
    confirmLabel: `Pause ${subscriptionId}`,
  });
  if (!isConfirmed) return undefined;
  const answer = await api.post<PauseAnswer>(`/v1/subscriptions/${segment(subscriptionId)}/pause`, reason.value.trim() === '' ? {} : { reason: reason.value.trim() });
  return `${answer.subscription_id} is paused (${answer.pause_reason ?? 'no reason'}).`;
}

async function resume(subscriptionId: string): Promise<string | undefined> {
  const isConfirmed = await confirmAction({
    title: `Resume ${subscriptionId}?`,
    body: [el('p', {}, 'Subscription ', code(subscriptionId), ' is delivered again: the groups held for its pause are let go at once, each from its head, in order.')],
    confirmLabel: `Resume ${subscriptionId}`,
  });
  if (!isConfirmed) return undefined;
  const answer = await api.post<ResumeAnswer>(`/v1/subscriptions/${segment(subscriptionId)}/resume`);
  return `${answer.subscription_id} resumed: ${plural(answer.released_groups, 'held group')} let go.`;
}

/** The pause and resume buttons of a subscription, as the group and subscriptions pages show them. */
export function pauseButtons(subscriptionId: string, isPaused: boolean, refresh: () => void): HTMLElement {
  // One key for both labels: the focus stays on the button when Pause becomes Resume.
  const button = el('button', { type: 'button', class: 'secondary', 'data-focus-key': `pause ${subscriptionId}` }, `${isPaused ? 'Resume' : 'Pause'} ${subscriptionId}`);
  button.addEventListener('click', () => void act(async () => (await (isPaused ? resume(subscriptionId) : pause(subscriptionId))) ?? 'Nothing was changed.', refresh));
  return button;
}

export const groupPage: Page = (main, request) => {
  const messageGroupId = request.params[0] ?? '';
  const body = el('div', {}, el('p', {}, 'Reading the group…'));
  replaceChildren(main, el('p', {}, link('#/lag', '← Lag')), el('h1', {}, 'Group ', code(messageGroupId)), body);
  const refresh = async (): Promise<void> => {
    let row: LagRow;
    try {
      row = (await api.get<GroupAnswer>(`/v1/groups/${segment(messageGroupId)}`)).group;
    } catch (error) {
      replaceChildren(body, errorBox('The group could not be read', error));
      return;
    }
    const waiting = Math.max(0, row.depth - 1);
    const actions = el('div', { class: 'actions' });
    // Only a head that failed alone can be skipped (one whose batch failed is tried alone first).
    if (row.head_event_id !== null && row.head_attempts > 0) {
      const eventId = row.head_event_id;
      const skip = el('button', { type: 'button', class: 'danger', 'data-focus-key': 'skip' }, 'Skip the head');
      skip.addEventListener('click', () => void act(async () => (await skipHead(row, eventId)) ?? 'Nothing was skipped.', view.refresh));
      actions.appendChild(skip);
    }
    const subscriptionId = row.subscription_id;
    if (subscriptionId !== null) actions.appendChild(pauseButtons(subscriptionId, row.is_paused, view.refresh));
    // Only the wait changes from one refresh to the next while the group stands still: update it alone.
    const signature = JSON.stringify({ ...row, oldest_wait_seconds: 0 });
    if (body.dataset.signature === signature && body.querySelector('[data-testid="group-wait"]') !== null) {
      const wait = body.querySelector('[data-testid="group-wait"]');
      if (wait !== null) wait.textContent = formatSeconds(row.oldest_wait_seconds);
      return;
    }
    body.dataset.signature = signature;
    replaceKeepingFocus(
      body,
      el('p', {}, ...rowStates(row)),
      el('h2', {}, 'Head'),
      row.depth === 0
        ? el('p', { 'data-testid': 'group-head' }, nothingWaitsLine(row.dead_lettered))
        : facts([
            ['Event', row.head_event_id === null ? el('span', { 'data-testid': 'group-head' }, 'flowing: no head is failing') : el('span', { 'data-testid': 'group-head' }, code(row.head_event_id))],
            ['Attempts', String(row.head_attempts)],
            ['Failing since', formatTime(row.head_failing_since)],
            ['Last error', row.last_error ?? '—'],
            ['Oldest wait', el('span', { 'data-testid': 'group-wait' }, formatSeconds(row.oldest_wait_seconds))],
          ]),
      el('p', { 'data-testid': 'group-waiting' }, row.depth === 0 ? '' : waitingLine(waiting)),
      actions,
      el('h2', {}, 'Group'),
      facts([
        ['Subscription', subscriptionId === null ? '—' : link(`#/subscriptions?subscription=${encodeURIComponent(subscriptionId)}`, code(subscriptionId))],
        ['Ordering key', row.ordering_key === null ? `${row.keys_affected} keys (a partition)` : code(row.ordering_key)],
        ['Depth', String(row.depth)],
        ['Dead letters', subscriptionId === null ? String(row.dead_lettered) : link(`#/dead-letters?subscription=${encodeURIComponent(subscriptionId)}`, String(row.dead_lettered))],
        ['Last delivery', formatTime(row.last_delivered_at)],
        ['Accepted per minute', String(row.accepted_per_minute)],
        ['Delivered per minute', String(row.delivered_per_minute)],
        ['Paused', row.is_paused ? `since ${formatTime(row.paused_at)}: ${row.pause_reason ?? ''}` : 'no'],
      ]),
    );
  };
  const view = every(() => REFRESH_MS, refresh);
  return view;
};
