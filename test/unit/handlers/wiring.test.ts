import { describe, expect, it } from 'vitest';
import { wiredOnFirstCall } from '../../../lambda/handlers/wiring.js';

describe('wiredOnFirstCall', () => {
  it('wires on the first call only, and not at import', async () => {
    let wirings = 0;
    const handler = wiredOnFirstCall(() => {
      wirings += 1;
      return async (name: string) => `hello ${name}`;
    });
    expect(wirings).toBe(0);
    expect(await handler('a')).toBe('hello a');
    expect(await handler('b')).toBe('hello b');
    expect(wirings).toBe(1);
  });

  it('lets a refused configuration fail the invocation, naming the variable', async () => {
    const { handler } = await import('../../../lambda/handlers/subscriptions.js');
    const { apiEvent } = await import('../../support/api-event.js');
    const { lambdaContext } = await import('../../support/captured-logs.js');
    // The test process has no SUBSCRIPTIONS_TABLE: the first invocation fails loudly, as a cold start would.
    expect(() => handler(apiEvent({ routeKey: 'GET /health' }), lambdaContext('request-1'))).toThrow(/SUBSCRIPTIONS_TABLE: must be set/);
  });
});
