/**
 * A subscription's dead letters, in the order the API lists them (each key's in sequence order),
 * paged; each with its reason and attempts, and its payload only when asked for (never kept
 * elsewhere, never logged). Redrive sends them all back, showing its progress step by step.
 */
import type { DeadLettersAnswer, RedriveAnswer } from '../../../lambda/core/answers.js';
import { api } from '../api.js';
import { cell, code, el, replaceChildren, replaceKeepingFocus, table } from '../dom.js';
import { formatTime, plural } from '../format.js';
import type { Page } from '../page.js';
import { confirmAction, describeFailure, errorBox, notify, pager } from '../ui.js';

type DeadLetterItem = DeadLettersAnswer['items'][number];

function letterRow(letter: DeadLetterItem, withPayloads: boolean): HTMLTableRowElement {
  return el(
    'tr',
    { 'data-event': letter.event_id },
    cell(letter.sequence ?? '—'),
    cell(code(letter.event_id)),
    withPayloads ? cell(letter.type ?? '—') : null,
    cell(letter.attempts),
    cell(letter.reason),
    cell(formatTime(letter.dead_lettered_at)),
    cell(code(letter.message_group_id)),
    withPayloads
      ? cell(el('details', {}, el('summary', {}, 'Payload'), el('pre', { class: 'payload', 'data-testid': 'payload' }, JSON.stringify(letter.payload ?? null, null, 2))))
      : null,
  );
}

/** After a step that sent nothing back (SQS refused for now, or another caller is redriving), the next waits this long. */
const IDLE_STEP_WAIT_MS = 2000;

/** Steps in a row that send nothing back before the console stops and says so. */
const MAX_IDLE_STEPS = 15;

/**
 * Steps the redrive until it is done, showing how far it got; resolves with the events sent back.
 * A step that sends nothing waits before the next, and after {@link MAX_IDLE_STEPS} of them in a
 * row the redrive stops, as it does when the reader leaves the page.
 */
async function redriveAll(subscriptionId: string, progress: HTMLProgressElement, label: HTMLElement, isStopped: () => boolean): Promise<string> {
  let sent = 0;
  let idleSteps = 0;
  for (;;) {
    const step = await api.post<RedriveAnswer>('/v1/dead-letters/redrive', { subscription_id: subscriptionId });
    sent += step.redriven.length;
    progress.max = Math.max(1, sent + step.remaining);
    progress.value = sent;
    label.textContent = `${plural(sent, 'event')} sent back, ${step.remaining} to go`;
    if (step.is_done) return `Redrive of ${subscriptionId} done: ${plural(sent, 'event')} sent back.`;
    idleSteps = step.redriven.length === 0 ? idleSteps + 1 : 0;
    if (idleSteps >= MAX_IDLE_STEPS) return `Redrive of ${subscriptionId} stopped: ${MAX_IDLE_STEPS} steps in a row sent nothing back (${step.remaining} remain). Redrive again later; what was sent stays sent.`;
    if (isStopped()) return `Redrive of ${subscriptionId} stopped when the page was left: ${plural(sent, 'event')} sent back, ${step.remaining} remain.`;
    if (step.redriven.length === 0) await new Promise((resolve) => window.setTimeout(resolve, IDLE_STEP_WAIT_MS));
  }
}

export const deadLettersPage: Page = (main, request) => {
  const subscriptionId = request.query.get('subscription') ?? '';
  const input = el('input', { type: 'text', name: 'subscription', id: 'dead-letters-subscription', value: subscriptionId, required: true, autocomplete: 'off' });
  const form = el('form', { class: 'inline' }, el('label', { for: 'dead-letters-subscription' }, 'Subscription id', input), el('button', { type: 'submit' }, 'Show dead letters'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = `#/dead-letters?subscription=${encodeURIComponent(input.value.trim())}`;
  });
  const body = el('div', {});
  replaceChildren(main, el('h1', {}, 'Dead letters'), form);
  if (subscriptionId === '') {
    main.appendChild(el('p', { class: 'muted' }, 'Name a subscription to see the events given up on its keys, each key’s in sequence order.'));
    return { stop: () => undefined };
  }

  // The actions stay put while the list below them is read again: a redrive's progress survives it.
  const redrive = el('button', { type: 'button', disabled: true }, 'Redrive all');
  const payloads = el('button', { type: 'button', class: 'secondary', 'aria-pressed': 'false' }, 'Show payloads');
  const progress = el('progress', { max: 1, value: 0, 'aria-label': 'Redrive progress', hidden: true });
  const progressLabel = el('span', { role: 'status', 'data-testid': 'redrive-progress' });
  main.append(el('div', { class: 'actions' }, redrive, payloads, progress, progressLabel), body);

  const cursors: (string | undefined)[] = [undefined];
  let withPayloads = false;
  let isRedriving = false;
  let isStopped = false;
  const load = async (): Promise<void> => {
    let answer: DeadLettersAnswer;
    try {
      answer = await api.get<DeadLettersAnswer>('/v1/dead-letters', { subscription_id: subscriptionId, cursor: cursors.at(-1), ...(withPayloads ? { include: 'payload' } : { limit: '50' }) });
    } catch (error) {
      replaceChildren(body, errorBox('The dead letters could not be read', error));
      return;
    }
    if (isStopped) return;
    redrive.disabled = isRedriving || (answer.items.length === 0 && cursors.length === 1);
    replaceKeepingFocus(
      body,
      answer.items.length === 0
        ? el('p', { 'data-testid': 'dead-letters-empty' }, `${subscriptionId} has no dead letters.`)
        : table(
            `Dead letters of ${subscriptionId}, page ${cursors.length}`,
            [
              { label: 'Sequence', isNumber: true },
              { label: 'Event' },
              ...(withPayloads ? [{ label: 'Type' }] : []),
              { label: 'Attempts', isNumber: true },
              { label: 'Reason' },
              { label: 'Dead-lettered' },
              { label: 'Group' },
              ...(withPayloads ? [{ label: 'Payload' }] : []),
            ],
            answer.items.map((letter) => letterRow(letter, withPayloads)),
          ),
      pager(cursors, answer.next_cursor, () => void load()),
    );
  };

  payloads.addEventListener('click', () => {
    withPayloads = !withPayloads;
    payloads.setAttribute('aria-pressed', String(withPayloads));
    payloads.textContent = withPayloads ? 'Hide payloads' : 'Show payloads';
    // Pages with payloads are shorter: the list starts again from its first.
    cursors.splice(1);
    void load();
  });
  redrive.addEventListener('click', () => {
    void (async () => {
      const isConfirmed = await confirmAction({
        title: `Redrive the dead letters of ${subscriptionId}?`,
        body: [
          el('p', {}, 'Every dead letter of subscription ', code(subscriptionId), ' is sent again to its receiver: each key’s in sequence order, each keeping its sequence number, marked as a redelivery.'),
          'Each leaves this list once it is sent back; an event that fails again is dead-lettered again.',
        ],
        confirmLabel: 'Redrive all',
      });
      if (!isConfirmed) return;
      isRedriving = true;
      redrive.disabled = true;
      progress.hidden = false;
      try {
        notify(await redriveAll(subscriptionId, progress, progressLabel, () => isStopped));
      } catch (error) {
        notify(describeFailure(error), true);
      } finally {
        isRedriving = false;
      }
      cursors.splice(1);
      await load();
    })();
  });
  void load();
  return {
    stop: () => {
      isStopped = true;
    },
  };
};
