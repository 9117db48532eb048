/**
 * The loopback guard the local stack's HTTP API and the CLI's console proxy share: which `Host`,
 * `Origin` and `Sec-Fetch-Site` a request may carry, per method.
 */
import { describe, expect, it } from 'vitest';
import { createLoopbackGuard } from '../../../local/loopback-guard.js';

const guard = createLoopbackGuard(['127.0.0.1', '127.0.0.1', 'localhost'], 3000, 'The local stack');
const OWN = '127.0.0.1:3000';

describe('createLoopbackGuard', () => {
  it('knows its own hosts and origins, each once', () => {
    expect([...guard.hosts]).toEqual(['127.0.0.1:3000', 'localhost:3000']);
    expect([...guard.origins]).toEqual(['http://127.0.0.1:3000', 'http://localhost:3000']);
    expect([...createLoopbackGuard(['::1'], 8001, 'This console').hosts]).toEqual(['[::1]:8001']);
  });

  it.each([
    { name: 'curl (no Origin, no Sec-Fetch-Site)', method: 'POST', headers: { host: OWN } },
    { name: 'its own name in capitals', method: 'GET', headers: { host: 'LOCALHOST:3000' } },
    { name: 'its own page’s write', method: 'POST', headers: { host: OWN, origin: 'http://127.0.0.1:3000', 'sec-fetch-site': 'same-origin' } },
    { name: 'a read from another site', method: 'GET', headers: { host: OWN, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } },
    { name: 'a preflight from another site', method: 'OPTIONS', headers: { host: OWN, origin: 'https://evil.example' } },
    { name: 'a navigation the user typed', method: 'GET', headers: { host: OWN, 'sec-fetch-site': 'none' } },
  ])('answers $name', ({ method, headers }) => {
    expect(guard.check(method, headers)).toBeUndefined();
  });

  it.each([
    { name: 'no Host', method: 'GET', headers: {}, reason: 'Host "" is not its own' },
    { name: 'a rebound name', method: 'GET', headers: { host: 'evil.example:3000' }, reason: 'Host "evil.example:3000" is not its own' },
    { name: 'another port', method: 'GET', headers: { host: '127.0.0.1:3001' }, reason: 'Host "127.0.0.1:3001" is not its own' },
    { name: 'a write from another origin', method: 'POST', headers: { host: OWN, origin: 'https://evil.example' }, reason: 'Origin "https://evil.example" is not its own' },
    { name: 'a write from an opaque origin', method: 'DELETE', headers: { host: OWN, origin: 'null' }, reason: 'Origin "null" is not its own' },
    { name: 'a write from another site without Origin', method: 'PUT', headers: { host: OWN, 'sec-fetch-site': 'cross-site' }, reason: 'Sec-Fetch-Site cross-site' },
    { name: 'a write from a sibling site', method: 'POST', headers: { host: OWN, 'sec-fetch-site': 'same-site' }, reason: 'Sec-Fetch-Site same-site' },
  ])('refuses $name with 403 forbidden', ({ method, headers, reason }) => {
    expect(guard.check(method, headers)).toMatchObject({ statusCode: 403, code: 'forbidden', reason });
  });
});
