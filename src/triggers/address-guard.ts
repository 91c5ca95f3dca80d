/**
 * Which addresses a webhook may connect to: ordinary public unicast only, unless its allow entry names
 * the host exactly (events/address-class.ts says what is public, for the sandbox's proxy too). The check runs on what DNS answers
 * at each attempt, and the connection goes to the address checked (safeLookup), so a name that
 * answers a public address to the check and a private one to the connection gets nowhere.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isPublicAddress, refusalOf } from '../events/address-class.js';

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
