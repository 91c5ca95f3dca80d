/**
 * Whether an IP address is an ordinary public one: the one classifier the webhook guard and the
 * sandbox's filtering proxy share, so every spelling of an address is judged the same way by both.
 *
 * It works from what an address is, not from a list of spellings:
 * - a host is first read the way a URL (and inet_aton) reads it, so `2130706433`, `0177.0.0.1`,
 *   `0x7f.1`, `127.1`, `127.0.0.1.` and `[::127.0.0.1]` are the addresses they name;
 * - an IPv4 address is public when ipaddr.js calls its range `unicast`;
 * - an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is the IPv4 address it carries;
 * - any other IPv6 address is public only inside global unicast (2000::/3), outside every
 *   special-purpose block ipaddr.js knows and outside the blocks that carry an IPv4 address
 *   (IPv4-compatible ::/96, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16, Teredo
 *   2001::/32, SIIT ::ffff:0:0:0/96): whatever they carry, they are not a plain public address,
 *   and the refusal names the IPv4 address inside when there is one;
 * - an address with a zone id (`fe80::1%eth0`) is scoped to one link, never public.
 */
import ipaddr from 'ipaddr.js';

export interface AddressClass {
  /** The address as read (canonical form), or the input when it is not an address. */
  address: string;
  public: boolean;
  /** What it is, in words: "a loopback address", "a NAT64 address carrying 10.0.0.1 (a private address)". */
  words: string;
}

const RANGE_WORDS: Record<string, string> = {
  unicast: 'a public address',
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a unique-local (private) address',
  carrierGradeNat: 'a carrier-grade NAT address',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
  benchmarking: 'a benchmarking address',
  discard: 'a discard-only address',
};

function rangeWords(range: string): string {
  return RANGE_WORDS[range] ?? `a special-purpose address (${range})`;
}

/**
 * The canonical IP address a host names (`0x7f.1` → `127.0.0.1`, `[::127.0.0.1]` → `::7f00:1`,
 * `fe80::1%eth0` → `fe80::1%eth0`), or null when the host is a name. Read by the WHATWG URL parser,
 * which reads IPv4 numbers as inet_aton and every HTTP client do (octal, hex, fewer than four parts).
 */
export function literalAddress(host: string): string | null {
  let h = host.trim().replace(/^\[|\]$/g, '');
  let zone = '';
  const pct = h.indexOf('%');
  if (pct >= 0 && h.includes(':')) {
    zone = h.slice(pct).replace(/^%25/, '%');
    h = h.slice(0, pct);
  }
  if (!h || /[/?#@\s\\]/.test(h)) return null;
  let parsed: string;
  try {
    parsed = new URL(`http://${h.includes(':') ? `[${h}]` : h}/`).hostname;
  } catch {
    return null;
  }
  if (parsed.startsWith('[')) return ipaddr.isValid(parsed.slice(1, -1)) ? parsed.slice(1, -1) + zone : null;
  return ipaddr.IPv4.isValidFourPartDecimal(parsed) ? parsed : null;
}

/** The IPv4 address held in bytes `at`…`at+3` of an IPv6 address, flipped for Teredo's client. */
function v4At(bytes: number[], at: number, flip = 0): ipaddr.IPv4 {
  return new ipaddr.IPv4(bytes.slice(at, at + 4).map((b) => b ^ flip));
}

/** The IPv4 address an IPv6 address carries, with the name of the block that carries it, or null. */
function carriedIPv4(v6: ipaddr.IPv6): { block: string; v4: ipaddr.IPv4 } | null {
  const b = v6.toByteArray();
  const within = (cidr: string) => v6.match(ipaddr.IPv6.parseCIDR(cidr));
  if (within('64:ff9b::/96')) return { block: 'a NAT64 address', v4: v4At(b, 12) };
  // RFC 6052's /48 layout: the address sits in bytes 6–7 and 9–10 around a zero byte
  if (within('64:ff9b:1::/48')) return { block: 'a local NAT64 address', v4: new ipaddr.IPv4([b[6], b[7], b[9], b[10]]) };
  if (within('2002::/16')) return { block: 'a 6to4 address', v4: v4At(b, 2) };
  if (within('2001::/32')) return { block: 'a Teredo address', v4: v4At(b, 12, 0xff) };
  if (within('::ffff:0:0:0/96')) return { block: 'an SIIT-translated address', v4: v4At(b, 12) };
  if (within('::/96')) return { block: 'an IPv4-compatible address', v4: v4At(b, 12) };
  return null;
}

const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

/** What an address is and whether it is public; a host that is not an IP address is not public. */
export function classifyAddress(host: string): AddressClass {
  const literal = literalAddress(host);
  if (literal === null) return { address: host, public: false, words: 'not an IP address' };
  if (literal.includes('%')) return { address: literal, public: false, words: 'a link-scoped address (it has a zone id)' };
  let ip = ipaddr.parse(literal);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  const address = ip.toString();
  const range = ip.range();
  if (ip.kind() === 'ipv4') return { address, public: range === 'unicast', words: rangeWords(range) };
  const v6 = ip as ipaddr.IPv6;
  if (range === 'unspecified' || range === 'loopback') return { address, public: false, words: rangeWords(range) };
  const carried = carriedIPv4(v6);
  if (carried) {
    const inner = carried.v4.range();
    return { address, public: false, words: `${carried.block} carrying ${carried.v4.toString()} (${rangeWords(inner)})` };
  }
  if (range !== 'unicast') return { address, public: false, words: rangeWords(range) };
  if (!v6.match(GLOBAL_UNICAST)) return { address, public: false, words: 'outside IPv6 global unicast (2000::/3)' };
  return { address, public: true, words: rangeWords('unicast') };
}

/** Whether a host is a public unicast IP address (any spelling; a name is not). */
export function isPublicAddress(host: string): boolean {
  return classifyAddress(host).public;
}

/** Why an address is refused, in words ("127.0.0.1 is a loopback address"). */
export function refusalOf(host: string): string {
  const c = classifyAddress(host);
  return c.address === host || `[${c.address}]` === host ? `${host} is ${c.words}` : `${host} (${c.address}) is ${c.words}`;
}
