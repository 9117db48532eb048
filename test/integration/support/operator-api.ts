/**
 * The operator's read and redrive routes as the integration tests use them on a test stack:
 * `GET /v1/lag`, `GET /v1/dead-letters`, `POST /v1/dead-letters/redrive`.
 */
import { expect } from 'vitest';
import type { DeadLetterRow } from '../../../lambda/core/dead-letter.js';
import type { LagRow } from '../../../lambda/core/lag.js';
import { call } from './api.js';
import { waitFor } from './poll.js';
import type { TestStack } from './stack.js';

export interface RedrivenEvent {
  readonly event_id: string;
  readonly sequence: number | null;
}

interface RedriveAnswer {
  readonly redriven: RedrivenEvent[];
  readonly remaining: number;
  readonly is_done: boolean;
}

/** The rows of the first page of the lag view, worst first. */
export async function lagRows(stack: TestStack): Promise<LagRow[]> {
  return ((await call(stack.url, 'GET', '/v1/lag')).body as { groups: LagRow[] }).groups;
}

/** A message group's row in the first page of the lag view; undefined when the view does not show it. */
export async function lagRowOf(stack: TestStack, messageGroupId: string): Promise<LagRow | undefined> {
  return (await lagRows(stack)).find((row) => row.message_group_id === messageGroupId);
}

/** The first page of a subscription's dead letters, in sequence order. */
export async function deadLettersOf(stack: TestStack, subscriptionId: string): Promise<DeadLetterRow[]> {
  return ((await call(stack.url, 'GET', `/v1/dead-letters?subscription_id=${encodeURIComponent(subscriptionId)}`)).body as { items: DeadLetterRow[] }).items;
}

/**
 * Redrives the subscription step by step until a step answers `is_done` with nothing remaining,
 * polling until the deadline of `waitFor`; what every step redrove, in order.
 */
export async function redriveUntilDone(stack: TestStack, subscriptionId: string): Promise<RedrivenEvent[]> {
  const redriven: RedrivenEvent[] = [];
  await waitFor(`the redrive of ${subscriptionId} done`, async () => {
    const answer = await call(stack.url, 'POST', '/v1/dead-letters/redrive', { subscription_id: subscriptionId });
    expect(answer.status).toBe(200);
    const step = answer.body as RedriveAnswer;
    redriven.push(...step.redriven);
    return step.is_done && step.remaining === 0;
  });
  return redriven;
}
