/**
 * Every attempt is bounded (docs/api.md#verifying-and-answering-a-webhook): on the local stack, a receiver that answers 200 and never
 * ends its body, or streams one without end, has its event delivered, its key moving on, and its
 * connection closed within DELIVERY_TIMEOUT_MS: the consumer is never held by a body.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { deadLettersOf } from './support/operator-api.js';
import { waitFor } from './support/poll.js';
import { useTestStack } from './support/stack-and-receiver.js';

const DELIVERY_TIMEOUT_MS = 1_000;

/** One request as the receiver saw it, and when (ms after it arrived) its connection closed. */
interface Arrival {
  readonly path: string;
  readonly webhookId: string;
  closedAfterMs: number | undefined;
}

describe('local stack attempts against a receiver whose body does not end', { timeout: 60_000 }, () => {
  const stack = useTestStack({ DELIVERY_TIMEOUT_MS: String(DELIVERY_TIMEOUT_MS), MAX_DELIVERY_ATTEMPTS: '3' });
  const arrivals: Arrival[] = [];
  let streamedBytes = 0;
  let receiver: Server;
  let receiverUrl: string;

  beforeAll(async () => {
    // `/hold/…` answers 200 with a few bytes and never ends; `/stream/…` answers 200 and writes
    // as fast as the stack reads, for ever.
    receiver = createServer((request: IncomingMessage, response: ServerResponse) => {
      const arrival: Arrival = { path: request.url ?? '', webhookId: String(request.headers['webhook-id']), closedAfterMs: undefined };
      const arrivedAt = Date.now();
      arrivals.push(arrival);
      response.on('close', () => {
        arrival.closedAfterMs = Date.now() - arrivedAt;
      });
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        if (arrival.path.startsWith('/hold/')) return response.write('received, and more to come');
        const chunk = Buffer.alloc(256 * 1024, 'x');
        const pump = (): void => {
          while (!response.destroyed) {
            streamedBytes += chunk.byteLength;
            if (!response.write(chunk)) return void response.once('drain', pump);
          }
        };
        return pump();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });

  // Registered after useTestStack, so it runs first: no attempt is left reading when the stack stops.
  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  });

  it.each(['hold', 'stream'])('delivers each event once and closes its connection within the timeout (%s)', async (mode) => {
    const subscriptionId = uniquePrefix(`bounded-${mode}`);
    const path = `/${mode}/${subscriptionId}`;
    await subscribe(stack().url, subscriptionId, `${receiverUrl}${path}`);
    const ids = [`${subscriptionId}-1`, `${subscriptionId}-2`];
    await postEvents(stack().url, ids.map((id) => makeEvent(subscriptionId, id)));

    // The second event is sent only once the first is recorded delivered: its key moved on.
    const seen = await waitFor('both events received and every connection closed', () => {
      const mine = arrivals.filter((arrival) => arrival.path === path);
      return mine.length >= 2 && mine.every((arrival) => arrival.closedAfterMs !== undefined) ? mine : undefined;
    });

    expect(seen.map((arrival) => arrival.webhookId)).toEqual(ids);
    for (const arrival of seen) expect(arrival.closedAfterMs).toBeLessThan(DELIVERY_TIMEOUT_MS + 1_000);
    expect(await deadLettersOf(stack(), subscriptionId)).toEqual([]);
    if (mode === 'stream') expect(streamedBytes).toBeGreaterThan(1024 * 1024);
  });
});
