/**
 * Which network addresses a webhook may be sent to. Deployed, only public unicast addresses: a
 * subscription must not turn the consumer into a proxy into the VPC, the instance metadata
 * service (169.254.169.254, fd00:ec2::254) or loopback.
 */
import ipaddr from 'ipaddr.js';

/** Four bytes of an IPv6 address, from two of its 16-bit parts, as the IPv4 address they spell. */
function ipv4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([(high >> 8) & 0xff, high & 0xff, (low >> 8) & 0xff, low & 0xff]);
}

/** The last 32 bits of an IPv6 address as an IPv4 address. */
const lastThirtyTwoBits = (parts: readonly number[]): ipaddr.IPv4[] => [ipv4Of(parts[6] ?? 0, parts[7] ?? 0)];

/**
 * The IPv6 forms that carry an IPv4 address, and where. Each is judged by the IPv4 inside, since a
 * translator, relay or dual stack on the way may deliver the packet to that IPv4 address: the
 * IPv4-compatible form of 169.254.169.254 (`::a9fe:a9fe`) is the metadata service, whatever
 * ipaddr.js calls its range. ipaddr.js itself turns only IPv4-mapped addresses into IPv4
 * (`ipaddr.process`), so the rest are read here.
 */
const IPV4_EMBEDDING_FORMS: readonly { readonly range: [ipaddr.IPv6, number]; readonly ipv4Of: (parts: readonly number[]) => ipaddr.IPv4[] }[] = [
  // IPv4-mapped (RFC 4291).
  { range: ipaddr.IPv6.parseCIDR('::ffff:0:0/96'), ipv4Of: lastThirtyTwoBits },
  // IPv4-translated (RFC 2765, RFC 6145).
  { range: ipaddr.IPv6.parseCIDR('::ffff:0:0:0/96'), ipv4Of: lastThirtyTwoBits },
  // IPv4-compatible (RFC 4291, deprecated), which holds :: and ::1 too: 0.0.0.0 and 0.0.0.1 are
  // refused as IPv4 as they are as IPv6. ipaddr.js parses the dotted `::a.b.c.d` as IPv4-mapped:
  // the same IPv4 inside, so the same verdict.
  { range: ipaddr.IPv6.parseCIDR('::/96'), ipv4Of: lastThirtyTwoBits },
  // NAT64, the well-known prefix (RFC 6052) and the local-use one (RFC 8215), as /96 prefixes.
  { range: ipaddr.IPv6.parseCIDR('64:ff9b::/96'), ipv4Of: lastThirtyTwoBits },
  { range: ipaddr.IPv6.parseCIDR('64:ff9b:1::/48'), ipv4Of: lastThirtyTwoBits },
  // 6to4 (RFC 3056): bits 16 to 47.
  { range: ipaddr.IPv6.parseCIDR('2002::/16'), ipv4Of: (parts) => [ipv4Of(parts[1] ?? 0, parts[2] ?? 0)] },
  // Teredo (RFC 4380): the server in bits 32 to 63, the client in the last 32 bits, every bit
  // flipped. Either may be where the packet goes: both must be public.
  {
    range: ipaddr.IPv6.parseCIDR('2001::/32'),
    ipv4Of: (parts) => [ipv4Of(parts[2] ?? 0, parts[3] ?? 0), ipv4Of(~(parts[6] ?? 0) & 0xffff, ~(parts[7] ?? 0) & 0xffff)],
  },
];

/**
 * Whether `address` (an IPv4 or IPv6 literal) is a public unicast address. Every special range
 * ipaddr.js knows (private, loopback, link-local, unique-local, carrier-grade NAT, multicast,
 * reserved…) is refused. An IPv6 address that embeds an IPv4 address (IPv4-mapped,
 * -translated and -compatible, NAT64, 6to4, Teredo: {@link IPV4_EMBEDDING_FORMS}) is judged by the
 * IPv4 inside, every one of them public, and by nothing else. The one judgement of the
 * subscription's URL and of the address each delivery connects to.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed instanceof ipaddr.IPv4) return parsed.range() === 'unicast';
  const form = IPV4_EMBEDDING_FORMS.find((candidate) => parsed.match(candidate.range));
  if (form === undefined) return parsed.range() === 'unicast';
  return form.ipv4Of(parsed.parts).every((ipv4) => ipv4.range() === 'unicast');
}

/** The endpoint URL schemes the contract allows. */
export const ENDPOINT_PROTOCOLS = ['http:', 'https:'] as const;

/**
 * Whether a URL string carries user information (`https://user:pass@host/`, `https://user@host/`).
 * A subscription's URL is shown back by `GET` and sent as Basic credentials by Node: a credential
 * has no place in it. A string that is not a URL has none.
 */
export function hasUserInfo(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return url.username !== '' || url.password !== '';
}

/** Whether a URL string is an absolute http(s) URL with a host. */
export function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (ENDPOINT_PROTOCOLS as readonly string[]).includes(url.protocol) && url.hostname !== '';
}
