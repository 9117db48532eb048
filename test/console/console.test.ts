/**
 * The operator console in a real browser (Debian's Chromium, headless) against the local stack and
 * a receiver that refuses one subscription: the stalled group shows first, skip moves its key on
 * (and a head that changed meanwhile shows the API's 409), payloads show as text, redrive empties
 * the dead letters with its progress, pause and resume ask first, the chart gains new
 * deliveries, and every page passes axe's checks of labels and contrast and works from the
 * keyboard. `npm run screenshots` runs this file to make the README's pictures.
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { call, makeEvent, postEvents, subscribe, uniquePrefix, type TestEvent } from '../integration/support/api.js';
import { waitFor } from '../integration/support/poll.js';
import { useStackAndReceiver } from '../integration/support/stack-and-receiver.js';
import { startConsole } from '../cli/support/console.js';
import { shoot, useChromium, type WatchedPage } from './support/browser.js';

const prefix = uniquePrefix('console');
const tenant = `${prefix}-tenant`;
const stuck = `${prefix}-stuck`;
const healthy = `${prefix}-healthy`;
const held = `${prefix}-held`;
/** What an event of the stuck subscription carries: markup that must stay text. */
const HOSTILE_NOTE = '<script>window.__pwned = true</script><img src=x onerror="window.__pwned = true">';

/** Expected in the browser's console: Chrome logs every non-2xx answer, and the 409 test asks for one. */
const REFUSED_ANSWER = /Failed to load resource: the server responded with a status of 409/;

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

describe('operator console in Chromium', { timeout: 120_000 }, () => {
  let isRefusing = true;
  const { stack, receiver } = useStackAndReceiver(
    // The stuck head is retried every second, 100 times: longer than the file runs, so only the operator's skip gives it up.
    { MAX_DELIVERY_ATTEMPTS: '100', RETRY_BASE_SECONDS: '1', RETRY_MAX_SECONDS: '1', STALL_THRESHOLD_SECONDS: '1' },
    { respond: (webhook) => (isRefusing && webhook.path === `/${stuck}` ? { statusCode: 503 } : undefined) },
  );
  const chromium = useChromium();
  const url = (hash: string): string => `${stack().url}/console/${hash}`;
  const event = (subscriptionId: string, n: number): TestEvent => ({ ...makeEvent(subscriptionId, `${subscriptionId}-${n}`, tenant), payload: { n, note: HOSTILE_NOTE } });
  let stuckGroup = '';

  /** Opens a page and waits for the console to render it. */
  async function open(hash: string): Promise<WatchedPage> {
    const watched = await chromium().newPage();
    await watched.page.goto(url(hash));
    await watched.page.getByRole('heading', { level: 1 }).first().waitFor();
    return watched;
  }

  function expectNoProblems(watched: WatchedPage): void {
    expect(watched.problems.filter((problem) => !REFUSED_ANSWER.test(problem))).toEqual([]);
  }

  async function headOf(groupId: string): Promise<string | null> {
    const answer = await call(stack().url, 'GET', `/v1/groups/${encodeURIComponent(groupId)}`);
    return (answer.body as { group: { head_event_id: string | null } }).group.head_event_id;
  }

  it('lists the stalled group first on the lag page, beside its subscription and key', async () => {
    for (const id of [stuck, healthy, held]) receiver().setSecret(id, await subscribe(stack().url, id, receiver().endpointFor(id), tenant));
    [stuckGroup = ''] = (await postEvents(stack().url, [1, 2, 3, 4].map((n) => event(stuck, n)))).map((result) => result.message_group_id);
    await waitFor('the stuck head failing', async () => (await headOf(stuckGroup)) === `${stuck}-1`);
    // A paused subscription's group waits too, and later: it shows second.
    expect((await call(stack().url, 'POST', `/v1/subscriptions/${held}/pause`, { reason: 'receiver migration' })).status).toBe(200);
    await postEvents(stack().url, [1, 2].map((n) => event(held, n)));
    await postEvents(stack().url, [1, 2, 3].map((n) => event(healthy, n)));
    await waitFor('the healthy key delivered', () => receiver().deliveredTo(healthy).length === 3);

    const watched = await open('#/lag');
    const { page } = watched;
    const rows = page.locator('tbody tr');
    await waitFor('the held group listed', async () => (await rows.count()) >= 2 && (await page.locator(`tr[data-group]:has-text("${held}")`).count()) === 1);
    const first = rows.first();
    expect(await first.getAttribute('data-group')).toBe(stuckGroup);
    expect(await first.textContent()).toContain(stuck);
    expect(await first.getByText(/head failing ×\d+/).count()).toBe(1);
    await expect.poll(() => page.locator('[data-testid="lag-stalled"] .value').textContent()).not.toBe('0');
    expect(await page.locator('nav a[aria-current="page"]').textContent()).toBe('Lag');
    await shoot(page, 'lag');
    expectNoProblems(watched);
  });

  it('skips the failing head after a confirmation naming it, and shows the API’s 409 when the head changed meanwhile', async () => {
    const watched = await open('#/lag');
    const { page } = watched;
    await page.locator(`tr[data-group="${stuckGroup}"] a`).first().click();
    await page.waitForURL(/#\/groups\//);
    await expect.poll(() => page.getByTestId('group-head').textContent()).toBe(`${stuck}-1`);
    expect(await page.getByTestId('group-waiting').textContent()).toContain('3 events wait behind the head');
    await shoot(page, 'group');

    await page.getByRole('button', { name: 'Skip the head' }).click();
    const dialog = page.getByRole('dialog', { name: 'Skip the head?' });
    expect(await dialog.textContent()).toContain(`Event ${stuck}-1 of key ${stuck} is dead-lettered at its next retry`);
    await shoot(page, 'skip-confirmation');
    await dialog.getByRole('button', { name: `Skip ${stuck}-1` }).click();
    await expect.poll(() => page.locator('#notice').textContent()).toContain(`Skip requested: ${stuck}-1`);
    await expect.poll(() => page.getByTestId('group-head').textContent()).toBe(`${stuck}-2`);

    // The operator opens the skip of stuck-2; someone else skips it first; the console's skip is refused.
    await page.getByRole('button', { name: 'Skip the head' }).click();
    const second = page.getByRole('dialog', { name: 'Skip the head?' });
    expect(await second.textContent()).toContain(`${stuck}-2`);
    expect((await call(stack().url, 'POST', `/v1/groups/${stuckGroup}/skip`, { event_id: `${stuck}-2` })).status).toBe(202);
    await waitFor('the other skip applied', async () => (await headOf(stuckGroup)) === `${stuck}-3`);
    await second.getByRole('button', { name: `Skip ${stuck}-2` }).click();
    // Said on the alert line (role alert), the status line emptied: the refusal in the API's words.
    await expect.poll(() => page.locator('#alert').textContent()).toBe('409 head_changed: The group’s head is another event now.');
    expect(await page.locator('#alert').getAttribute('role')).toBe('alert');
    expect(await page.locator('#notice').textContent()).toBe('');
    expectNoProblems(watched);
  });

  it('shows dead letters in sequence order with their payloads as text, and redrive empties them with its progress', async () => {
    const watched = await open(`#/dead-letters?subscription=${encodeURIComponent(stuck)}`);
    const { page } = watched;
    await expect.poll(() => page.locator('tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-event')))).toEqual([`${stuck}-1`, `${stuck}-2`]);

    await page.getByRole('button', { name: 'Show payloads' }).click();
    const payload = page.locator(`tr[data-event="${stuck}-1"] details`);
    await payload.locator('summary').click();
    expect(await payload.getByTestId('payload').textContent()).toContain(HOSTILE_NOTE.replaceAll('"', '\\"'));
    // Shown, never run: no script ran and no element came of it.
    expect(await page.evaluate(() => (globalThis as { __pwned?: boolean }).__pwned)).toBeUndefined();
    expect(await page.locator('main img, main script').count()).toBe(0);
    await shoot(page, 'dead-letters');

    isRefusing = false;
    await page.getByRole('button', { name: 'Redrive all' }).click();
    const dialog = page.getByRole('dialog', { name: `Redrive the dead letters of ${stuck}?` });
    await dialog.getByRole('button', { name: 'Redrive all' }).click();
    await expect.poll(() => page.locator('#notice').textContent()).toBe(`Redrive of ${stuck} done: 2 events sent back.`);
    await expect.poll(() => page.getByTestId('dead-letters-empty').textContent()).toBe(`${stuck} has no dead letters.`);
    await waitFor('the redriven events delivered', () => {
      const ids = receiver().deliveredTo(stuck).map((delivery) => delivery.webhookId);
      return [1, 2, 3, 4].every((n) => ids.includes(`${stuck}-${n}`));
    });
    expectNoProblems(watched);
  });

  it('stops a redrive whose steps send nothing back after 15 of them, 2 s apart, and says what remains', async () => {
    const watched = await chromium().newPage();
    const { page } = watched;
    // The browser's timers on a clock the test moves: 15 waits of 2 s take no time.
    await page.clock.install();
    let steps = 0;
    await page.route((target) => target.pathname === '/v1/dead-letters', (route) =>
      route.fulfill({ json: { items: [{ event_id: 'evt_x', subscription_id: 'sub_x', message_group_id: 'g', sequence: 1, attempts: 3, reason: 'HTTP 500', dead_lettered_at: '2026-12-05T00:00:00.000Z' }], next_cursor: null } }),
    );
    await page.route((target) => target.pathname === '/v1/dead-letters/redrive', (route) => {
      steps += 1;
      return route.fulfill({ json: { subscription_id: 'sub_x', redriven: [], remaining: 3, is_done: false } });
    });
    await page.goto(url('#/dead-letters?subscription=sub_x'));
    await page.getByRole('button', { name: 'Redrive all' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Redrive all' }).click();
    await expect
      .poll(async () => {
        await page.clock.fastForward(2100);
        return page.locator('#notice').textContent();
      })
      .toBe('Redrive of sub_x stopped: 15 steps in a row sent nothing back (3 remain). Redrive again later; what was sent stays sent.');
    expect(steps).toBe(15);
    expectNoProblems(watched);
  });

  it('lists a tenant’s subscriptions and pauses and resumes one after a confirmation', async () => {
    const watched = await open(`#/subscriptions?tenant=${encodeURIComponent(tenant)}`);
    const { page } = watched;
    await expect.poll(() => page.locator('tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-subscription')))).toEqual([healthy, held, stuck].sort());
    const row = page.locator(`tr[data-subscription="${healthy}"]`);
    // Delivered to: its last delivery is shown; the paused one never was.
    expect(await row.textContent()).toMatch(/\d{2}:\d{2}:\d{2}/);
    expect(await page.locator(`tr[data-subscription="${held}"]`).textContent()).toContain('none yet');
    await row.getByRole('button', { name: `Pause ${healthy}` }).click();
    const dialog = page.getByRole('dialog', { name: `Pause ${healthy}?` });
    await dialog.getByLabel('Reason (shown in the lag view; optional)').fill('maintenance <b>window</b>');
    await dialog.getByRole('button', { name: `Pause ${healthy}` }).click();
    await expect.poll(() => page.locator('#notice').textContent()).toBe(`${healthy} is paused (maintenance <b>window</b>).`);
    await expect.poll(() => row.textContent()).toContain('paused maintenance <b>window</b>');
    await shoot(page, 'subscriptions');

    await row.getByRole('button', { name: `Resume ${healthy}` }).click();
    await page.getByRole('dialog', { name: `Resume ${healthy}?` }).getByRole('button', { name: `Resume ${healthy}` }).click();
    await expect.poll(() => page.locator('#notice').textContent()).toContain(`${healthy} resumed`);
    await expect.poll(() => row.textContent()).toContain('delivering');
    expectNoProblems(watched);
  });

  it('draws the last hour on the overview, with the stalled groups, and the chart gains new deliveries', async () => {
    const watched = await open('#/overview');
    const { page } = watched;
    const delivered = async (): Promise<number> => Number(/(\d+) delivered/.exec((await page.getByTestId('chart-summary').textContent()) ?? '')?.[1] ?? Number.NaN);
    await expect.poll(delivered).toBeGreaterThan(0);
    expect(await page.locator('[data-testid="chart"] canvas').count()).toBe(1);
    expect(await page.getByTestId('chart-summary').textContent()).toContain('Source: the local stack');
    // stuck-3 fails again (the receiver refuses again): a stalled group.
    isRefusing = true;
    await postEvents(stack().url, [5].map((n) => event(stuck, n)));
    await expect.poll(() => page.locator('[data-testid="stalled-groups"] .value').textContent()).toBe('1');
    const before = await delivered();
    const refreshes = Number(await page.getByTestId('chart').getAttribute('data-refreshes'));
    await postEvents(stack().url, [4, 5, 6].map((n) => event(healthy, n)));
    await expect.poll(delivered).toBeGreaterThanOrEqual(before + 3);
    expect(Number(await page.getByTestId('chart').getAttribute('data-refreshes'))).toBeGreaterThan(refreshes);
    await shoot(page, 'overview');
    expectNoProblems(watched);
  });

  it('works the same through `ordered-webhooks console`, the loopback proxy: pages read and an action taken through it', async () => {
    const proxy = await startConsole(['--url', stack().url]);
    try {
      const watched = await chromium().newPage();
      const { page } = watched;
      await page.goto(`${proxy.url}#/subscriptions?tenant=${encodeURIComponent(tenant)}`);
      const row = page.locator(`tr[data-subscription="${held}"]`);
      await expect.poll(() => row.textContent()).toContain('paused');
      // A write through the proxy, as the browser sends it (Origin and Sec-Fetch-Site of the console's own page).
      await row.getByRole('button', { name: `Resume ${held}` }).click();
      await page.getByRole('dialog', { name: `Resume ${held}?` }).getByRole('button', { name: `Resume ${held}` }).click();
      await expect.poll(() => page.locator('#notice').textContent()).toContain(`${held} resumed`);
      expect((await call(stack().url, 'GET', `/v1/subscriptions/${held}`)).body).toMatchObject({ is_paused: false });
      expect(await page.evaluate(() => (globalThis as unknown as { location: { host: string } }).location.host)).toBe(proxy.host);
      expectNoProblems(watched);
    } finally {
      await proxy.stop();
    }
  });

  it('goes from page to page by keyboard, and every page passes axe’s checks of names, labels and contrast', async () => {
    const watched = await open('#/overview');
    const { page } = watched;
    await page.keyboard.press('Tab');
    expect(await page.locator(':focus').textContent()).toBe('Skip to content');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.locator(':focus').textContent()).toBe('Lag');
    await page.keyboard.press('Enter');
    await page.waitForURL(/#\/lag$/);
    // The router runs on hashchange, after the URL changed.
    await expect.poll(() => page.locator('nav a[aria-current="page"]').textContent()).toBe('Lag');
    expect(await page.locator(':focus').getAttribute('id')).toBe('view');

    const pages = [
      ['#/overview', 'Overview'],
      ['#/lag', 'Lag'],
      [`#/groups/${encodeURIComponent(stuckGroup)}`, 'Group'],
      [`#/dead-letters?subscription=${encodeURIComponent(stuck)}`, 'Dead letters'],
      [`#/subscriptions?tenant=${encodeURIComponent(tenant)}`, 'Subscriptions'],
    ] as const;
    for (const [hash, title] of pages) {
      // A new document per page, read once its data is shown: axe never sees the previous page's.
      await page.goto('about:blank');
      await page.goto(url(hash));
      await page.waitForFunction((expected) => (globalThis as unknown as { document: { title: string } }).document.title.startsWith(expected), title);
      await page.locator('main table, main [data-testid$="-empty"], main dl').first().waitFor();
      expect(await violationsOf(page), hash).toEqual([]);
    }
    // A confirmation, open: its name, buttons and the page under it.
    await page.getByRole('button', { name: /^Pause / }).first().click();
    await page.getByRole('dialog').waitFor();
    expect(await violationsOf(page), 'the pause dialog').toEqual([]);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    expectNoProblems(watched);
  });
});

/** axe-core's WCAG 2 A and AA violations on the page, as `rule: target` lines. */
async function violationsOf(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (a script tag would be refused).
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (options: object) => Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.flatMap((violation) => violation.nodes.map((node) => `${violation.id}: ${node.target.join(' ')}`));
  });
}
