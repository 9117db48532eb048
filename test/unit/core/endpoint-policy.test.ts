import { describe, expect, it } from 'vitest';
import { isHttpUrl, isPublicAddress } from '../../../lambda/core/endpoint-policy.js';

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    'not an address',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe('isHttpUrl', () => {
  it.each([
    { url: 'https://example.com/hooks', ok: true },
    { url: 'http://127.0.0.1:4000/', ok: true },
    { url: 'ftp://example.com/', ok: false },
    { url: 'file:///etc/passwd', ok: false },
    { url: 'example.com/hooks', ok: false },
    { url: '', ok: false },
    { url: 'javascript:alert(1)', ok: false },
  ])('judges $url: $ok', ({ url, ok }) => {
    expect(isHttpUrl(url)).toBe(ok);
  });
});
