import { describe, expect, it } from 'vitest';
import {
  backstopMaxReceiveCount,
  maxEventsPerMessage,
  ConfigError,
  consumerTimeoutSeconds,
  Deployment,
  loadConfig,
  loadResourceNames,
  queueVisibilityTimeoutSeconds,
  recordTimeBudgetMs,
  toEnvironment,
  visibilityCeilingSeconds,
} from '../../lambda/config.js';

describe('loadConfig', () => {
  it('gives the defaults of docs/configuration.md locally', () => {
    expect(loadConfig({}, Deployment.local)).toEqual({
      port: 3000,
      maxDeliveryAttempts: 5,
      onExhausted: 'dead_letter',
      retryBaseSeconds: 5,
      retryMaxSeconds: 900,
      deliveryTimeoutMs: 10_000,
      partitionCount: undefined,
      consumerConcurrency: 4,
      allowPrivateEndpoints: true,
      dataDir: undefined,
      oldestMessageAlarmSeconds: 900,
      stallThresholdSeconds: 300,
      maxGroupWaitAlarmSeconds: 900,
      stalledGroupsAlarmThreshold: 1,
      heldAgeAlarmSeconds: 864_000,
      pauseEvacuation: 'none',
      queueBacklogAlarmMessages: 100_000,
      fallingBehindWaitSeconds: 120,
      alarmEmail: undefined,
      deliveryStateTtlDays: 30,
      eventRetentionDays: 7,
      logLevel: 'INFO',
    });
  });

  it('refuses private endpoints by default when deployed', () => {
    expect(loadConfig({}, Deployment.deployed).allowPrivateEndpoints).toBe(false);
    expect(loadConfig({ ALLOW_PRIVATE_ENDPOINTS: 'false' }, Deployment.local).allowPrivateEndpoints).toBe(false);
  });

  it('reads every variable', () => {
    const config = loadConfig(
      {
        PORT: '8080',
        MAX_DELIVERY_ATTEMPTS: '3',
        ON_EXHAUSTED: 'STALL',
        RETRY_BASE_SECONDS: '0',
        RETRY_MAX_SECONDS: '60',
        DELIVERY_TIMEOUT_MS: '2500',
        PARTITION_COUNT: '64',
        CONSUMER_CONCURRENCY: '8',
        ALLOW_PRIVATE_ENDPOINTS: 'TRUE',
        DATA_DIR: './.data',
        OLDEST_MESSAGE_ALARM_SECONDS: '300',
        STALL_THRESHOLD_SECONDS: '60',
        MAX_GROUP_WAIT_ALARM_SECONDS: '120',
        STALLED_GROUPS_ALARM_THRESHOLD: '3',
        HELD_AGE_ALARM_SECONDS: '600000',
        PAUSE_EVACUATION: ' Store ',
        QUEUE_BACKLOG_ALARM_MESSAGES: '50000',
        FALLING_BEHIND_WAIT_SECONDS: '45',
        ALARM_EMAIL: 'ops@example.com',
        DELIVERY_STATE_TTL_DAYS: '29',
        EVENT_RETENTION_DAYS: '3',
        LOG_LEVEL: 'debug',
      },
      Deployment.deployed,
    );
    expect(config).toMatchObject({
      port: 8080,
      maxDeliveryAttempts: 3,
      onExhausted: 'stall',
      retryBaseSeconds: 0,
      retryMaxSeconds: 60,
      deliveryTimeoutMs: 2500,
      partitionCount: 64,
      consumerConcurrency: 8,
      allowPrivateEndpoints: true,
      dataDir: './.data',
      oldestMessageAlarmSeconds: 300,
      stallThresholdSeconds: 60,
      maxGroupWaitAlarmSeconds: 120,
      stalledGroupsAlarmThreshold: 3,
      heldAgeAlarmSeconds: 600_000,
      pauseEvacuation: 'store',
      queueBacklogAlarmMessages: 50_000,
      fallingBehindWaitSeconds: 45,
      alarmEmail: 'ops@example.com',
      deliveryStateTtlDays: 29,
      eventRetentionDays: 3,
      logLevel: 'DEBUG',
    });
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PARTITION_COUNT: '', PORT: '' }, Deployment.local)).toMatchObject({ partitionCount: undefined, port: 3000 });
  });

  it.each([
    { env: { PORT: 'abc' }, variable: 'PORT' },
    { env: { PORT: '70000' }, variable: 'PORT' },
    { env: { MAX_DELIVERY_ATTEMPTS: '0' }, variable: 'MAX_DELIVERY_ATTEMPTS' },
    { env: { RETRY_BASE_SECONDS: '-1' }, variable: 'RETRY_BASE_SECONDS' },
    { env: { RETRY_MAX_SECONDS: '50000' }, variable: 'RETRY_MAX_SECONDS' },
    { env: { RETRY_BASE_SECONDS: '60', RETRY_MAX_SECONDS: '30' }, variable: 'RETRY_MAX_SECONDS' },
    { env: { DELIVERY_TIMEOUT_MS: '1.5' }, variable: 'DELIVERY_TIMEOUT_MS' },
    { env: { PARTITION_COUNT: '0' }, variable: 'PARTITION_COUNT' },
    { env: { CONSUMER_CONCURRENCY: '1' }, variable: 'CONSUMER_CONCURRENCY' },
    { env: { ALLOW_PRIVATE_ENDPOINTS: 'yes' }, variable: 'ALLOW_PRIVATE_ENDPOINTS' },
    { env: { ALARM_EMAIL: 'not-an-address' }, variable: 'ALARM_EMAIL' },
    { env: { LOG_LEVEL: 'LOUD' }, variable: 'LOG_LEVEL' },
    { env: { ON_EXHAUSTED: 'retry' }, variable: 'ON_EXHAUSTED' },
    { env: { STALL_THRESHOLD_SECONDS: '0' }, variable: 'STALL_THRESHOLD_SECONDS' },
    { env: { MAX_GROUP_WAIT_ALARM_SECONDS: '10' }, variable: 'MAX_GROUP_WAIT_ALARM_SECONDS' },
    { env: { STALLED_GROUPS_ALARM_THRESHOLD: '0' }, variable: 'STALLED_GROUPS_ALARM_THRESHOLD' },
    { env: { FALLING_BEHIND_WAIT_SECONDS: '0' }, variable: 'FALLING_BEHIND_WAIT_SECONDS' },
    { env: { AUTO_PAUSE_AFTER_SECONDS: '0' }, variable: 'AUTO_PAUSE_AFTER_SECONDS' },
    { env: { HELD_AGE_ALARM_SECONDS: '1209600' }, variable: 'HELD_AGE_ALARM_SECONDS' },
    { env: { QUEUE_BACKLOG_ALARM_MESSAGES: '0' }, variable: 'QUEUE_BACKLOG_ALARM_MESSAGES' },
    { env: { AUTO_PAUSE_AFTER_SECONDS: '1209601' }, variable: 'AUTO_PAUSE_AFTER_SECONDS' },
    { env: { AUTO_PAUSE_AFTER_SECONDS: '1d' }, variable: 'AUTO_PAUSE_AFTER_SECONDS' },
    { env: { PAUSE_EVACUATION: 'dlq' }, variable: 'PAUSE_EVACUATION' },
    // Parked at that age: an hour must be left of SQS's 14 days.
    { env: { PAUSE_EVACUATION: 'store', HELD_AGE_ALARM_SECONDS: '1206001' }, variable: 'HELD_AGE_ALARM_SECONDS' },
    // A record gone before its event's last message (14 days in the queue, 14 in the dead-letter queue): an import would number it again.
    { env: { DELIVERY_STATE_TTL_DAYS: '28', EVENT_RETENTION_DAYS: '7' }, variable: 'DELIVERY_STATE_TTL_DAYS' },
  ])('refuses $env, naming $variable', ({ env, variable }) => {
    expect(() => loadConfig(env, Deployment.local)).toThrow(ConfigError);
    expect(() => loadConfig(env, Deployment.local)).toThrow(new RegExp(`^Invalid configuration:\\n  - ${variable}: `));
  });

  it.each([
    { timeoutMs: '10000', ceiling: 43_070 },
    { timeoutMs: '60000', ceiling: 42_570 },
  ])('refuses a RETRY_MAX_SECONDS whose visibility SQS would refuse, with DELIVERY_TIMEOUT_MS=$timeoutMs', ({ timeoutMs, ceiling }) => {
    expect(loadConfig({ DELIVERY_TIMEOUT_MS: timeoutMs, RETRY_MAX_SECONDS: String(ceiling) }, Deployment.local).retryMaxSeconds).toBe(ceiling);
    const refused = { DELIVERY_TIMEOUT_MS: timeoutMs, RETRY_MAX_SECONDS: String(ceiling + 1) };
    expect(() => loadConfig(refused, Deployment.local)).toThrow(
      new RegExp(`^Invalid configuration:\\n  - RETRY_MAX_SECONDS: must be at most ${ceiling}: SQS's 12-hour visibility limit .* less the consumer's timeout .*DELIVERY_TIMEOUT_MS=${timeoutMs}\\) \\(got "${ceiling + 1}"\\)$`),
    );
  });

  it('reads AUTO_PAUSE_AFTER_SECONDS, unset by default, and refuses it beside ON_EXHAUSTED=stall, which gives nothing up', () => {
    expect(loadConfig({}, Deployment.local).autoPauseAfterSeconds).toBeUndefined();
    expect(loadConfig({ AUTO_PAUSE_AFTER_SECONDS: '86400' }, Deployment.deployed).autoPauseAfterSeconds).toBe(86_400);
    expect(() => loadConfig({ AUTO_PAUSE_AFTER_SECONDS: '86400', ON_EXHAUSTED: 'stall' }, Deployment.local)).toThrow(
      /^Invalid configuration:\n {2}- AUTO_PAUSE_AFTER_SECONDS: must be unset with ON_EXHAUSTED=stall: .* \(got "86400"\)$/,
    );
  });

  it('names a refused DELIVERY_TIMEOUT_MS once, without a ceiling computed from it', () => {
    try {
      loadConfig({ DELIVERY_TIMEOUT_MS: 'abc', RETRY_MAX_SECONDS: '43100' }, Deployment.local);
      expect.unreachable();
    } catch (error) {
      expect((error as ConfigError).problems).toEqual(['DELIVERY_TIMEOUT_MS: must be an integer between 100 and 60000 (got "abc")']);
    }
  });

  it('names every refused variable at once', () => {
    try {
      loadConfig({ PORT: 'x', MAX_DELIVERY_ATTEMPTS: 'y' }, Deployment.local);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems.map((p) => p.split(':')[0])).toEqual(['PORT', 'MAX_DELIVERY_ATTEMPTS']);
    }
  });
});

describe('toEnvironment', () => {
  it('round-trips the settings a function needs, with private endpoints written out', () => {
    const config = loadConfig({ PARTITION_COUNT: '16', MAX_DELIVERY_ATTEMPTS: '7', ON_EXHAUSTED: 'stall' }, Deployment.deployed);
    const environment = toEnvironment(config);
    expect(environment.ALLOW_PRIVATE_ENDPOINTS).toBe('false');
    const reread = loadConfig(environment, Deployment.local);
    expect(reread).toMatchObject({
      partitionCount: 16,
      maxDeliveryAttempts: 7,
      onExhausted: 'stall',
      allowPrivateEndpoints: false,
      retryBaseSeconds: config.retryBaseSeconds,
      retryMaxSeconds: config.retryMaxSeconds,
      deliveryTimeoutMs: config.deliveryTimeoutMs,
      deliveryStateTtlDays: config.deliveryStateTtlDays,
      eventRetentionDays: config.eventRetentionDays,
    });
  });

  it('keeps no event for a replay with EVENT_RETENTION_DAYS=0, and never longer than the records a replay reads', () => {
    expect(loadConfig({ EVENT_RETENTION_DAYS: '0' }, Deployment.deployed).eventRetentionDays).toBe(0);
    expect(() => loadConfig({ EVENT_RETENTION_DAYS: '31' }, Deployment.deployed)).toThrow(/EVENT_RETENTION_DAYS: must be at most DELIVERY_STATE_TTL_DAYS/);
    expect(loadConfig({ EVENT_RETENTION_DAYS: '31', DELIVERY_STATE_TTL_DAYS: '31' }, Deployment.deployed).eventRetentionDays).toBe(31);
    expect(() => loadConfig({ EVENT_RETENTION_DAYS: '-1' }, Deployment.deployed)).toThrow(/EVENT_RETENTION_DAYS: must be at least 0/);
  });

  it('writes AUTO_PAUSE_AFTER_SECONDS out only when it is set', () => {
    expect(toEnvironment(loadConfig({}, Deployment.deployed)).AUTO_PAUSE_AFTER_SECONDS).toBeUndefined();
    const environment = toEnvironment(loadConfig({ AUTO_PAUSE_AFTER_SECONDS: '3600' }, Deployment.deployed));
    expect(loadConfig(environment, Deployment.deployed).autoPauseAfterSeconds).toBe(3600);
  });
});

describe('derived settings', () => {
  it.each([
    { timeoutMs: '10000', consumer: 130, visibility: 780 },
    { timeoutMs: '60000', consumer: 630, visibility: 3780 },
    { timeoutMs: '100', consumer: 31, visibility: 186 },
  ])('gives the consumer time for 10 sequential attempts of $timeoutMs ms and the queue 6 × that', ({ timeoutMs, consumer, visibility }) => {
    const config = loadConfig({ DELIVERY_TIMEOUT_MS: timeoutMs }, Deployment.deployed);
    expect(consumerTimeoutSeconds(config)).toBe(consumer);
    expect(queueVisibilityTimeoutSeconds(config)).toBe(visibility);
    expect(consumer).toBeLessThanOrEqual(900);
  });

  it.each([
    { timeoutMs: '10000', ceiling: 43_200 - 130 },
    { timeoutMs: '60000', ceiling: 43_200 - 630 },
    { timeoutMs: '100', ceiling: 43_200 - 31 },
  ])('lets the consumer set visibilities up to 12 h less its timeout of $timeoutMs ms attempts', ({ timeoutMs, ceiling }) => {
    const config = loadConfig({ DELIVERY_TIMEOUT_MS: timeoutMs }, Deployment.deployed);
    expect(visibilityCeilingSeconds(config)).toBe(ceiling);
    expect(visibilityCeilingSeconds(config) + consumerTimeoutSeconds(config)).toBe(43_200);
  });

  it.each([
    { timeoutMs: '10000', budgetMs: 20_000 },
    { timeoutMs: '60000', budgetMs: 70_000 },
  ])('starts a record only with its attempt of $timeoutMs ms and 10 s for its calls left', ({ timeoutMs, budgetMs }) => {
    const config = loadConfig({ DELIVERY_TIMEOUT_MS: timeoutMs }, Deployment.deployed);
    expect(recordTimeBudgetMs(config)).toBe(budgetMs);
    // The tenth record of a batch whose nine before it used their whole timeout still starts.
    expect(consumerTimeoutSeconds(config) * 1000 - 9 * config.deliveryTimeoutMs).toBeGreaterThanOrEqual(budgetMs + 20_000);
  });

  it('lifts the backstop to SQS’s ceiling when exhausted heads stall, whose successors are received without end', () => {
    expect(backstopMaxReceiveCount(loadConfig({ ON_EXHAUSTED: 'stall' }, Deployment.deployed))).toBe(1000);
  });

  it('packs at most as many events per message as keep the backstop within SQS’s 1,000 receives and a crash loop within 7 days', () => {
    for (const attempts of [1, 5, 9, 20, 100]) {
      for (const deliveryTimeoutMs of [1_000, 10_000, 60_000]) {
        const config = loadConfig({ MAX_DELIVERY_ATTEMPTS: String(attempts), DELIVERY_TIMEOUT_MS: String(deliveryTimeoutMs) }, Deployment.deployed);
        const perMessage = maxEventsPerMessage(config);
        expect(perMessage).toBeGreaterThanOrEqual(1);
        expect(perMessage).toBeLessThanOrEqual(10);
        // Every event of the ten messages a receive holds may spend its attempts while a message rides along.
        expect(backstopMaxReceiveCount(config)).toBe(Math.min(1000, 10 * perMessage * (attempts + 1)));
        if (perMessage > 1) expect(backstopMaxReceiveCount(config) * queueVisibilityTimeoutSeconds(config)).toBeLessThanOrEqual(7 * 86_400);
      }
    }
    expect(maxEventsPerMessage(loadConfig({}, Deployment.deployed))).toBe(10);
    expect(maxEventsPerMessage(loadConfig({ MAX_DELIVERY_ATTEMPTS: '20' }, Deployment.deployed))).toBe(3);
  });

  it('puts the SQS backstop above the receives an unattempted successor can collect', () => {
    for (const attempts of [1, 5, 20]) {
      const config = loadConfig({ MAX_DELIVERY_ATTEMPTS: String(attempts) }, Deployment.deployed);
      expect(backstopMaxReceiveCount(config)).toBeGreaterThan(10 * attempts);
      expect(backstopMaxReceiveCount(config)).toBeGreaterThanOrEqual(10);
    }
  });
});

describe('loadResourceNames', () => {
  const all = ['subscriptionsTable', 'eventsTable', 'orderingKeysTable', 'deliveryQueueUrl', 'deadLetterQueueUrl'] as const;

  it('reads the physical names and names every missing one', () => {
    expect(() => loadResourceNames({ EVENTS_TABLE: 'e' }, all)).toThrow(/SUBSCRIPTIONS_TABLE: must be set\n.*ORDERING_KEYS_TABLE: must be set/);
    const names = loadResourceNames(
      { SUBSCRIPTIONS_TABLE: 's', EVENTS_TABLE: 'e', ORDERING_KEYS_TABLE: 'k', DELIVERY_QUEUE_URL: 'q', DEAD_LETTER_QUEUE_URL: 'd' },
      all,
    );
    expect(names).toEqual({ subscriptionsTable: 's', eventsTable: 'e', orderingKeysTable: 'k', deliveryQueueUrl: 'q', deadLetterQueueUrl: 'd' });
  });

  it('asks only for what a function is given', () => {
    expect(loadResourceNames({ SUBSCRIPTIONS_TABLE: 's' }, ['subscriptionsTable'])).toEqual({ subscriptionsTable: 's' });
  });
});
