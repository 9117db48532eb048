/**
 * Which network addresses a webhook may be sent to. Deployed, only public unicast addresses: a
 * subscription must not turn the consumer into a proxy into the VPC, the instance metadata
 * service (169.254.169.254, fd00:ec2::254) or loopback.
 */
import ipaddr from 'ipaddr.js';

/**
 * Whether `address` (an IPv4 or IPv6 literal) is a public unicast address. IPv4-mapped IPv6 is
 * judged as the IPv4 it carries; every special range ipaddr.js knows (private, loopback,
 * link-local, unique-local, carrier-grade NAT, multicast, reserved, 6to4, Teredo…) is refused.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return parsed.range() === 'unicast';
}

/** The endpoint URL schemes the contract allows. */
export const ENDPOINT_PROTOCOLS = ['http:', 'https:'] as const;

/** Whether a URL string is an absolute http(s) URL with a host. */
export function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (ENDPOINT_PROTOCOLS as readonly string[]).includes(url.protocol) && url.hostname !== '';
}
