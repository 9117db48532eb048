import { afterEach, describe, expect, it, vi } from 'vitest';
import { SERVICE_NAMES, type FunctionName } from '../../../lambda/config.js';
import { CONSUMER_METRICS } from '../../../lambda/core/consumer-metrics.js';
import { LAG_METRICS } from '../../../lambda/core/lag.js';
import { createLogger, withLambdaContext } from '../../../lambda/handlers/logger.js';
import { wiringFromEnvironment } from '../../../lambda/handlers/wiring.js';
import { captureLogs, lambdaContext } from '../../support/captured-logs.js';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('withLambdaContext', () => {
  it('marks only the first invocation as a cold start, and keeps no key of one invocation on the next', async () => {
    // As Lambda sets it for an on-demand execution environment, before the function's code loads.
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
    const logger = createLogger('test', 'INFO');
    const handler = withLambdaContext(logger, async (event: { readonly isTagged: boolean }) => {
      if (event.isTagged) logger.appendKeys({ tag: 'first invocation only' });
      logger.info('handled');
    });

    const { lines } = await captureLogs(async () => {
      await handler({ isTagged: true }, lambdaContext('request-1'));
      await handler({ isTagged: false }, lambdaContext('request-2'));
    });

    expect(lines.map((line) => [line.function_request_id, line.cold_start, line.tag])).toEqual([
      ['request-1', true, 'first invocation only'],
      ['request-2', false, undefined],
    ]);
  });

  it('drops the invocation’s keys when the handler throws', async () => {
    const logger = createLogger('test', 'INFO');
    const handler = withLambdaContext(logger, async (event: { readonly shouldThrow: boolean }) => {
      logger.info('handled');
      if (event.shouldThrow) throw new Error('fault');
    }, { correlationIdOf: () => 'correlation-1' });

    const { lines } = await captureLogs(async () => {
      await expect(handler({ shouldThrow: true }, lambdaContext('request-1'))).rejects.toThrow('fault');
      logger.info('between invocations');
    });

    expect(lines.map((line) => [line.message, line.correlation_id])).toEqual([
      ['handled', 'correlation-1'],
      ['between invocations', undefined],
    ]);
  });
});

describe('service names', () => {
  it('names each function’s logger after its entry in SERVICE_NAMES, the consumer and lag job as their metrics', async () => {
    const names = Object.keys(SERVICE_NAMES) as FunctionName[];
    const { lines } = await captureLogs(async () => {
      for (const name of names) wiringFromEnvironment(name, []).logger.info('wired');
    });
    expect(lines.map((line) => line.service)).toEqual(names.map((name) => SERVICE_NAMES[name]));
    expect(SERVICE_NAMES.consumer).toBe(CONSUMER_METRICS.service);
    expect(SERVICE_NAMES.lagMetrics).toBe(LAG_METRICS.service);
  });
});
