/**
 * Which addresses a webhook may connect to: ordinary public unicast only, unless its allow entry names
 * the host exactly. Loopback, link-local, private, carrier-grade NAT, unique-local, multicast,
 * reserved, and the IPv6 forms that embed an IPv4 address are refused (ipaddr.js's ranges; an
 * IPv4-mapped IPv6 address is judged as the IPv4 address it is). The check runs on what DNS answers
 * at each attempt, and the connection goes to the address checked (safeLookup), so a name that
 * answers a public address to the check and a private one to the connection gets nowhere.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** ipaddr.js's range of an address ('unicast' for a public one), or 'invalid'. */
export function addressRange(address: string): string {
  try {
    return ipaddr.process(address.replace(/^\[|\]$/g, '')).range();
  } catch {
    return 'invalid';
  }
}

export function isPublicAddress(address: string): boolean {
  return addressRange(address) === 'unicast';
}

const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a unique-local (private) address',
  carrierGradeNat: 'a carrier-grade NAT address',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
};

/** Why an address is refused, in words ("127.0.0.1 is a loopback address"). */
export function refusalOf(address: string): string {
  const r = addressRange(address);
  return `${address} is ${RANGE_WORDS[r] ?? `not a public address (${r})`}`;
}

/** Thrown by safeLookup: the request fails with it, and the attempt line says why. */
export class AddressRefused extends Error {
  readonly code = 'ADDRESS_REFUSED';
}

/**
 * A `lookup` for http.request: resolves the name, keeps the addresses allowed (all of them when
 * `anyAddress`), and hands the connection the first; `chosen` hears which one.
 */
export function safeLookup(opts: { anyAddress: boolean; chosen?: (address: string) => void; resolve?: typeof dnsLookup }): LookupFunction {
  const resolveName = opts.resolve ?? dnsLookup;
  return ((
    hostname: string,
    options: { family?: number | string },
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    const family = typeof options?.family === 'number' ? options.family : 0;
    resolveName(hostname, { all: true, family, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as LookupAddress[];
      const ok = opts.anyAddress ? list : list.filter((a) => isPublicAddress(a.address));
      if (!ok.length) {
        const why = list.map((a) => refusalOf(a.address)).join('; ') || 'no address';
        return callback(
          new AddressRefused(`${hostname} resolves to no public address (${why}); allow it in config.json webhooks.allow by its exact host to send there`),
          '',
          0,
        );
      }
      opts.chosen?.(ok[0].address);
      // Node asks with all: true since v20 (autoSelectFamily); answer in the form asked
      if ((options as { all?: boolean }).all) return callback(null, [ok[0]]);
      callback(null, ok[0].address, ok[0].family);
    });
  }) as LookupFunction;
}

/** An IP literal host ("127.0.0.1", "[::1]") as an address, or null for a name. */
export function literalAddress(hostname: string): string | null {
  const h = hostname.replace(/^\[|\]$/g, '');
  return isIP(h) ? h : null;
}
