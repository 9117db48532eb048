import { describe, expect, it } from 'vitest';
import { hasUserInfo, isHttpUrl, isPublicAddress } from '../../../lambda/core/endpoint-policy.js';

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

describe('isPublicAddress of an IPv6 address that embeds an IPv4 address (ALLOW_PRIVATE_ENDPOINTS=false)', () => {
  // Teredo carries the client's address with every bit flipped: ~8.8.8.8 is f7f7:f7f7,
  // ~1.1.1.1 is fefe:fefe, ~169.254.169.254 is 5601:5601.
  it.each([
    { form: 'IPv4-compatible (::/96), the metadata address', address: '::a9fe:a9fe', isPublic: false },
    { form: 'IPv4-compatible, dotted', address: '::169.254.169.254', isPublic: false },
    { form: 'IPv4-compatible, loopback', address: '::7f00:1', isPublic: false },
    { form: 'IPv4-compatible, private', address: '::a00:8', isPublic: false },
    { form: 'IPv4-compatible, public', address: '::808:808', isPublic: true },
    { form: 'IPv4-mapped (::ffff:0:0/96), metadata', address: '::ffff:a9fe:a9fe', isPublic: false },
    { form: 'IPv4-mapped, public', address: '::ffff:808:808', isPublic: true },
    { form: 'IPv4-translated (::ffff:0:0:0/96), metadata', address: '::ffff:0:a9fe:a9fe', isPublic: false },
    { form: 'IPv4-translated, private', address: '::ffff:0:10.1.2.3', isPublic: false },
    { form: 'IPv4-translated, public', address: '::ffff:0:808:808', isPublic: true },
    { form: '6to4 (2002::/16), metadata', address: '2002:a9fe:a9fe::1', isPublic: false },
    { form: '6to4, loopback', address: '2002:7f00:1::', isPublic: false },
    { form: '6to4, public', address: '2002:808:808::1', isPublic: true },
    { form: 'NAT64 well-known (64:ff9b::/96), metadata', address: '64:ff9b::a9fe:a9fe', isPublic: false },
    { form: 'NAT64 well-known, private', address: '64:ff9b::10.0.0.1', isPublic: false },
    { form: 'NAT64 well-known, public', address: '64:ff9b::808:808', isPublic: true },
    { form: 'NAT64 local-use (64:ff9b:1::/48), metadata', address: '64:ff9b:1::a9fe:a9fe', isPublic: false },
    { form: 'NAT64 local-use, loopback', address: '64:ff9b:1:ffff::7f00:1', isPublic: false },
    { form: 'NAT64 local-use, public', address: '64:ff9b:1::808:808', isPublic: true },
    { form: 'Teredo (2001::/32), private server', address: '2001:0:a00:1::f7f7:f7f7', isPublic: false },
    { form: 'Teredo, metadata client', address: '2001:0:808:808::5601:5601', isPublic: false },
    { form: 'Teredo, loopback client', address: '2001:0:808:808::80ff:fffe', isPublic: false },
    { form: 'Teredo, public server and client', address: '2001:0:808:808::fefe:fefe', isPublic: true },
    { form: 'the unspecified address, inside ::/96', address: '::', isPublic: false },
    { form: 'the loopback address, inside ::/96', address: '::1', isPublic: false },
  ])('judges $form ($address): public $isPublic', ({ address, isPublic }) => {
    expect(isPublicAddress(address)).toBe(isPublic);
  });
});

describe('hasUserInfo', () => {
  it.each([
    { url: 'https://user:pass@hooks.example.com/', has: true },
    { url: 'https://user@hooks.example.com/', has: true },
    { url: 'https://:pass@hooks.example.com/', has: true },
    { url: 'https://hooks.example.com/path@x', has: false },
    { url: 'https://hooks.example.com/?to=a@b', has: false },
    { url: 'not a url', has: false },
  ])('judges $url: $has', ({ url, has }) => {
    expect(hasUserInfo(url)).toBe(has);
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
