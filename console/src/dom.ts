/**
 * Building the page: elements made with text content only, never HTML. Whatever an event, an error
 * or a subscription holds is shown as the characters it is: a payload with `<script>` stays text.
 */

/** A child of an element: text, another element, or nothing. */
export type Child = Node | string | number | null | undefined | false;

/** Attributes set with `setAttribute` (never `on…` handlers, never `style`), and listeners. */
export interface Props {
  readonly [attribute: string]: string | number | boolean | undefined | EventListener;
}

/** `<tag attributes…>children…</tag>`: text children become text nodes. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: readonly Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, '').toLowerCase(), value);
    else if (name === 'on' || name.startsWith('on') || name === 'style') throw new Error(`el: ${name} is not set as an attribute`);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

/** Appends children, text as text nodes. */
export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces an element's children. */
export function replaceChildren(parent: Element, ...children: readonly Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A table with a caption, header cells and rows; `number` columns align right. */
export function table(caption: string, columns: readonly { readonly label: string; readonly isNumber?: boolean }[], rows: readonly HTMLTableRowElement[]): HTMLTableElement {
  return el(
    'table',
    {},
    el('caption', {}, caption),
    el('thead', {}, el('tr', {}, ...columns.map((column) => el('th', { scope: 'col', class: column.isNumber === true ? 'number' : undefined }, column.label)))),
    el('tbody', {}, ...rows),
  );
}

/** A cell; numbers align right. */
export function cell(...children: readonly Child[]): HTMLTableCellElement {
  const isNumber = children.length === 1 && typeof children[0] === 'number';
  return el('td', { class: isNumber ? 'number' : undefined }, ...children);
}

/** A link inside the console (`#/…`). */
export function link(hash: string, ...children: readonly Child[]): HTMLAnchorElement {
  return el('a', { href: hash }, ...children);
}

/** Code-like text: ids, keys, URLs. */
export function code(text: string): HTMLElement {
  return el('code', {}, text);
}

/**
 * Rebuilds `container` with `children`, keeping the keyboard focus on the control the reader was
 * on: the one with the same `data-focus-key` (a button whose label changes, Pause to Resume, keeps
 * its key), else the same kind of element with the same text and target. So a live refresh never
 * throws a keyboard user back to the top of the page; if the control is gone, the page's content
 * takes the focus.
 */
export function replaceKeepingFocus(container: Element, ...children: readonly Child[]): void {
  const focused = document.activeElement;
  const wasInside = focused instanceof HTMLElement && focused !== container && container.contains(focused);
  const identity = wasInside ? { key: focused.dataset.focusKey, tag: focused.tagName, text: focused.textContent, href: focused.getAttribute('href') } : undefined;
  replaceChildren(container, ...children);
  if (identity === undefined) return;
  const candidates = [...container.querySelectorAll<HTMLElement>(identity.key === undefined ? identity.tag : '[data-focus-key]')];
  const same = identity.key === undefined
    ? candidates.find((candidate) => candidate.textContent === identity.text && candidate.getAttribute('href') === identity.href)
    : candidates.find((candidate) => candidate.dataset.focusKey === identity.key);
  (same ?? document.getElementById('view'))?.focus();
}
