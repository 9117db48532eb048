/**
 * What every page shares: the notice line (what an action did), error boxes (the API's own
 * words), the confirmation an action asks for first, and the figures of a page's head.
 */
import { ApiFailure } from './api.js';
import { el, replaceChildren, type Child } from './dom.js';

/**
 * Says what an action did: in the status line, or for a refusal or failure in the alert line.
 * Both live regions are always in the page (a region added or shown late is often not read out),
 * empty until used; the other one is emptied, so one line stands for the last action.
 */
export function notify(message: string, isError = false): void {
  const [shown, other] = isError ? ['alert', 'notice'] : ['notice', 'alert'];
  const region = document.getElementById(shown);
  document.getElementById(other)?.replaceChildren();
  if (region !== null) replaceChildren(region, message);
}

export function clearNotice(): void {
  document.getElementById('notice')?.replaceChildren();
  document.getElementById('alert')?.replaceChildren();
}

/** Whether a confirmation is open: the live pages wait under it. */
export function isDialogOpen(): boolean {
  return document.querySelector('dialog[open]') !== null;
}

/** The words of a failure: the API's code and message for an API answer, never a stack. */
export function describeFailure(error: unknown): string {
  if (error instanceof ApiFailure) return error.describe();
  return error instanceof Error ? `The console failed: ${error.message}` : 'The console failed.';
}

/**
 * An error box for a page whose data could not be read, in place of the data. It is read out once
 * (the alert line), not at every refresh that fails the same way.
 */
export function errorBox(what: string, error: unknown): HTMLElement {
  const message = `${what}: ${describeFailure(error)}`;
  if (document.getElementById('alert')?.textContent !== message) notify(message, true);
  return el('div', { class: 'error-box' }, message);
}

/**
 * Asks before an action, in a modal dialog naming exactly what will happen. Resolves true on
 * the confirming button; Escape and Cancel resolve false. The dialog takes the focus, and gives it
 * back to where it was.
 */
export function confirmAction(input: { readonly title: string; readonly body: readonly Child[]; readonly confirmLabel: string; readonly isDanger?: boolean; readonly extra?: HTMLElement }): Promise<boolean> {
  const returnFocus = document.activeElement instanceof HTMLElement ? document.activeElement : undefined;
  return new Promise((resolve) => {
    const cancel = el('button', { type: 'button', class: 'secondary', value: 'cancel' }, 'Cancel');
    const confirm = el('button', { type: 'button', class: input.isDanger === true ? 'danger' : undefined, value: 'confirm' }, input.confirmLabel);
    const titleId = `dialog-title-${Date.now()}`;
    const dialog = el('dialog', { 'aria-labelledby': titleId }, el('h2', { id: titleId }, input.title), ...input.body.map((part) => (typeof part === 'string' ? el('p', {}, part) : part)), input.extra ?? null, el('div', { class: 'actions' }, confirm, cancel));
    const focusKey = returnFocus?.dataset.focusKey;
    const close = (isConfirmed: boolean): void => {
      dialog.close();
      dialog.remove();
      // The control that opened the dialog, or its successor if a refresh rebuilt the page meanwhile.
      const successor = focusKey === undefined ? undefined : document.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focusKey)}"]`);
      (returnFocus?.isConnected === true ? returnFocus : (successor ?? document.getElementById('view')))?.focus();
      resolve(isConfirmed);
    };
    confirm.addEventListener('click', () => close(true));
    cancel.addEventListener('click', () => close(false));
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      close(false);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    (input.extra?.querySelector('input') ?? cancel).focus();
  });
}

/** One figure of a page's head: a value and what it is, marked bad when it needs a look. */
export function figure(label: string, value: string | number, isBad = false, testId?: string): HTMLLIElement {
  return el('li', { class: isBad ? 'figure bad' : 'figure', 'data-testid': testId }, el('span', { class: 'value' }, String(value)), el('span', { class: 'label' }, label));
}

/** A small marker of state. */
export function badge(text: string, tone: 'bad' | 'warn' | 'good'): HTMLSpanElement {
  return el('span', { class: `badge ${tone}` }, text);
}

/**
 * Previous and Next page buttons over a list read page by page: `cursors` holds the cursor of each
 * page read so far (undefined for the first), the last being the page shown. A click moves along
 * it and calls `turn` to read the page; both buttons stay disabled until that page is shown, so a
 * double click turns one page.
 */
export function pager(cursors: (string | undefined)[], nextCursor: string | null, turn: () => void): HTMLElement {
  const previous = el('button', { type: 'button', class: 'secondary', disabled: cursors.length === 1, 'data-focus-key': 'previous' }, 'Previous page');
  const next = el('button', { type: 'button', class: 'secondary', disabled: nextCursor === null, 'data-focus-key': 'next' }, 'Next page');
  const go = (move: () => void): void => {
    previous.disabled = next.disabled = true;
    move();
    turn();
  };
  previous.addEventListener('click', () => go(() => cursors.pop()));
  next.addEventListener('click', () => {
    if (nextCursor !== null) go(() => cursors.push(nextCursor));
  });
  return el('div', { class: 'pager' }, previous, next, el('span', { class: 'muted' }, `page ${cursors.length}`));
}
