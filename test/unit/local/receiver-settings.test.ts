/**
 * The settings of `npm run receiver` and its failing mode: defaults, each refused value named
 * with what was given, and the answers the mode gives.
 */
import { describe, expect, it } from 'vitest';
import { createReceiverResponder, describeReceiverMode, readReceiverSettings } from '../../../local/receiver-settings.js';

describe('readReceiverSettings', () => {
  it('answers every webhook with 204 at once on port 4000 when nothing is set', () => {
    expect(readReceiverSettings({})).toEqual({ port: 4000, secret: undefined, failRate: 0, failureStatus: 500, delayMs: 0 });
  });

  it('reads the failing mode when its variables are set', () => {
    expect(readReceiverSettings({ RECEIVER_FAIL_RATE: '0.3', RECEIVER_STATUS: '503', RECEIVER_DELAY_MS: '250', RECEIVER_PORT: '4100' })).toEqual({
      port: 4100,
      secret: undefined,
      failRate: 0.3,
      failureStatus: 503,
      delayMs: 250,
    });
  });

  it('counts an empty variable as unset', () => {
    expect(readReceiverSettings({ RECEIVER_FAIL_RATE: '', RECEIVER_STATUS: ' ' })).toMatchObject({ failRate: 0, failureStatus: 500 });
  });

  it.each([
    [{ RECEIVER_STATUS: '42' }, 'RECEIVER_STATUS: must be an integer between 100 and 599 (got "42")'],
    [{ RECEIVER_STATUS: '600' }, 'RECEIVER_STATUS: must be an integer between 100 and 599 (got "600")'],
    [{ RECEIVER_STATUS: 'teapot' }, 'RECEIVER_STATUS: must be an integer between 100 and 599 (got "teapot")'],
    [{ RECEIVER_FAIL_RATE: '1.5' }, 'RECEIVER_FAIL_RATE: must be a number from 0 to 1 (the share of webhooks refused) (got "1.5")'],
    [{ RECEIVER_FAIL_RATE: '50%' }, 'RECEIVER_FAIL_RATE: must be a number from 0 to 1 (the share of webhooks refused) (got "50%")'],
    [{ RECEIVER_DELAY_MS: '-5' }, 'RECEIVER_DELAY_MS: must be an integer between 0 and 60000 (got "-5")'],
    [{ RECEIVER_PORT: '70000' }, 'RECEIVER_PORT: must be an integer between 0 and 65535 (got "70000")'],
    [{ WEBHOOK_SECRET: 'not-a-secret' }, 'WEBHOOK_SECRET: must be "whsec_" followed by base64 of 24 to 64 bytes'],
  ])('refuses %j naming the variable', (env, problem) => {
    expect(readReceiverSettings(env)).toEqual({ problems: [problem] });
  });
});

describe('createReceiverResponder', () => {
  it.each([
    [1, 0.999, 503],
    [0, 0, 204],
    [0.5, 0.49, 500],
    [0.5, 0.5, 204],
  ])('with RECEIVER_FAIL_RATE %s and a draw of %s answers %s', async (failRate, draw, status) => {
    const respond = createReceiverResponder({ failRate, failureStatus: status === 204 ? 500 : status, delayMs: 0 }, () => draw);

    expect(await respond()).toEqual({ statusCode: status });
  });

  it('waits RECEIVER_DELAY_MS before answering', async () => {
    const respond = createReceiverResponder({ failRate: 0, failureStatus: 500, delayMs: 50 });
    const startedAt = performance.now();

    await respond();

    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(45);
  });
});

describe('describeReceiverMode', () => {
  it('says what share is refused, with which status and delay', () => {
    expect(describeReceiverMode({ port: 4000, secret: undefined, failRate: 1, failureStatus: 503, delayMs: 200 })).toBe(
      'refuses 100% of webhooks with 503 (RECEIVER_FAIL_RATE, RECEIVER_STATUS), after 200 ms (RECEIVER_DELAY_MS)',
    );
    expect(describeReceiverMode({ port: 4000, secret: undefined, failRate: 0, failureStatus: 500, delayMs: 0 })).toBe('answers 204 to every webhook');
  });
});
