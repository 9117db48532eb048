/**
 * The start-up banner: the endpoints and the mode it names, the busy-port message, and the one
 * example it shares with the README's walkthrough.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { Deployment, loadConfig } from '../../../lambda/config.js';
import { DEFAULT_URL } from '../../../cli/options.js';
import { describeStartFailure, FAILING_MODE_EXAMPLE, formatAwsCliExample, formatBanner, formatWalkthrough } from '../../../local/banner.js';

const ENDPOINTS = { sqs: 'http://127.0.0.1:40001', dynamo: 'http://127.0.0.1:40002' };

async function readme(): Promise<string> {
  return readFile(new URL('../../../README.md', import.meta.url), 'utf8');
}

describe('formatBanner', () => {
  it('names the API URL, the SQS and DynamoDB endpoints and an AWS CLI command for them', () => {
    const banner = formatBanner(DEFAULT_URL, ENDPOINTS, loadConfig({}, Deployment.local));

    expect(banner).toContain(`  API:       ${DEFAULT_URL}\n`);
    expect(banner).toMatch(/^ {2}SQS: +http:\/\/127\.0\.0\.1:40001 /m);
    expect(banner).toMatch(/^ {2}DynamoDB: +http:\/\/127\.0\.0\.1:40002 /m);
    expect(banner).toContain('AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local aws --region us-east-1 --endpoint-url http://127.0.0.1:40001 sqs list-queues');
  });

  it.each([
    [{}, 'mode: ON_EXHAUSTED=dead_letter: after MAX_DELIVERY_ATTEMPTS=5 failed attempts an event is dead-lettered and its key moves on; retries back off 5–900 s'],
    [
      { AUTO_PAUSE_AFTER_SECONDS: '3600' },
      'mode: ON_EXHAUSTED=dead_letter: after MAX_DELIVERY_ATTEMPTS=5 failed attempts an event is dead-lettered and its key moves on, unless its key has failed for AUTO_PAUSE_AFTER_SECONDS=3600: then its subscription is paused (a notice goes to the SNS topic ordered-webhooks-notices); retries back off 5–900 s',
    ],
    [
      { ON_EXHAUSTED: 'stall', MAX_DELIVERY_ATTEMPTS: '3', RETRY_BASE_SECONDS: '0', RETRY_MAX_SECONDS: '60' },
      'mode: ON_EXHAUSTED=stall: after MAX_DELIVERY_ATTEMPTS=3 failed attempts an event is retried every 60 s and its key waits; retries back off 0–60 s',
    ],
  ])('names the mode for %j', (env, mode) => {
    expect(formatBanner(DEFAULT_URL, ENDPOINTS, loadConfig(env, Deployment.local))).toContain(mode);
  });

  it('prints the walkthrough and the failing-mode example', () => {
    const banner = formatBanner(DEFAULT_URL, ENDPOINTS, loadConfig({}, Deployment.local));

    for (const line of [...formatWalkthrough(DEFAULT_URL), ...FAILING_MODE_EXAMPLE]) expect(banner).toContain(`\n  ${line}\n`);
  });
});

describe('the README', () => {
  it("shows the banner's walkthrough, failing-mode and AWS CLI lines exactly, for the default URL", async () => {
    const text = await readme();

    for (const line of [...formatWalkthrough(DEFAULT_URL), ...FAILING_MODE_EXAMPLE]) expect(text).toContain(`\n${line}\n`);
    expect(text).toContain(formatAwsCliExample('<SQS endpoint>'));
  });
});

describe('describeStartFailure', () => {
  it('says which variable to set when the port is in use', () => {
    const error = Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:3000'), { code: 'EADDRINUSE' });

    expect(describeStartFailure(error, loadConfig({}, Deployment.local))).toBe('port 3000 is in use: set PORT=<another> (e.g. PORT=3001 npm start)');
  });

  it('leaves other failures to the log', () => {
    expect(describeStartFailure(new Error('boom'), loadConfig({}, Deployment.local))).toBeUndefined();
  });
});
