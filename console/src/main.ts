/**
 * The console's entry: the router. The hash names the page (`#/lag`, `#/groups/<id>`,
 * `#/dead-letters?subscription=…`), so a link or a reload lands on it; each page renders into
 * `main` from the public HTTP API alone, as text, and stops its refreshes when left.
 */
import { el, replaceChildren } from './dom.js';
import type { Page, PageView } from './page.js';
import { deadLettersPage } from './pages/dead-letters.js';
import { groupPage } from './pages/group.js';
import { lagPage } from './pages/lag.js';
import { overviewPage } from './pages/overview.js';
import { subscriptionsPage } from './pages/subscriptions.js';
import { clearNotice } from './ui.js';

/** The pages by the first segment of the hash; the nav marks the page's section. */
const PAGES: Readonly<Record<string, { readonly page: Page; readonly section: string; readonly title: string }>> = {
  overview: { page: overviewPage, section: 'overview', title: 'Overview' },
  lag: { page: lagPage, section: 'lag', title: 'Lag' },
  groups: { page: groupPage, section: 'lag', title: 'Group' },
  'dead-letters': { page: deadLettersPage, section: 'dead-letters', title: 'Dead letters' },
  subscriptions: { page: subscriptionsPage, section: 'subscriptions', title: 'Subscriptions' },
};

let current: PageView | undefined;

function route(isNavigation: boolean): void {
  const main = document.getElementById('view');
  if (main === null) return;
  const hash = location.hash.replace(/^#\/?/, '');
  const [path = '', search = ''] = hash.split('?', 2);
  const [name = 'overview', ...params] = path.split('/').map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  });
  const entry = PAGES[name === '' ? 'overview' : name];
  current?.stop();
  clearNotice();
  for (const anchor of document.querySelectorAll<HTMLAnchorElement>('nav a[data-page]')) {
    if (anchor.dataset.page === entry?.section) anchor.setAttribute('aria-current', 'page');
    else anchor.removeAttribute('aria-current');
  }
  if (entry === undefined) {
    replaceChildren(main, el('h1', {}, 'Not found'), el('p', {}, 'The console has no page ', el('code', {}, `#/${path}`), '.'));
    current = undefined;
    return;
  }
  document.title = `${entry.title} · ordered-webhooks console`;
  current = entry.page(main, { params, query: new URLSearchParams(search) });
  // After a move within the console, the reader (and a screen reader) starts at the new page's content.
  if (isNavigation) main.focus({ preventScroll: true });
}

const origin = document.getElementById('api-origin');
if (origin !== null) origin.textContent = `API: ${location.origin}`;
window.addEventListener('hashchange', () => route(true));
route(false);
