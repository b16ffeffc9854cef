import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Where the service may send the host's error deliveries: public addresses only, unless the
 * operator allows private ones (the demo, a receiver on the same machine). Without this the
 * error webhook is a way to probe loopback, the private network and cloud metadata endpoints.
 */

const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 3], // multicast, reserved, broadcast
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** Whether an IP address (v4 or v6, IPv4-mapped v6 included) is a public one. */
export function isPublicAddress(address: string): boolean {
  const plain = address.replace(/^\[|\]$/g, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(plain)?.[1] ?? mappedHex(plain);
  if (mapped) return isPublicAddress(mapped);
  const family = isIP(plain);
  if (family === 0) return false;
  return !NOT_PUBLIC.check(plain, family === 4 ? 'ipv4' : 'ipv6');
}

/** `::ffff:7f00:1`, the form URL parsers give an IPv4-mapped address, as `127.0.0.1`. */
function mappedHex(address: string): string | undefined {
  const m = /^::ffff:([\da-f]{1,4}):([\da-f]{1,4})$/i.exec(address);
  if (!m) return undefined;
  const [high, low] = [Number.parseInt(m[1]!, 16), Number.parseInt(m[2]!, 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/**
 * Why a URL's host is not a public target, or undefined when it may be. Names are checked
 * again when they are resolved (`publicOnlyLookup`), since a name can point anywhere.
 */
export function privateTargetReason(url: URL): string | undefined {
  // `localhost.` is `localhost`: a trailing dot only makes a name fully qualified.
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is this machine`;
  if (isIP(host) && !isPublicAddress(host)) return `${host} is a private, loopback or link-local address`;
  return undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for http.request that refuses names resolving to anything but public addresses. */
export function publicOnlyLookup(hostname: string, options: { all?: boolean }, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const blocked = addresses.find((a) => !isPublicAddress(a.address));
    if (blocked) {
      const refused: NodeJS.ErrnoException = new Error(`${hostname} resolves to a private address`);
      refused.code = 'EPRIVATE';
      return callback(refused, []);
    }
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}
