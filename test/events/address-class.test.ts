import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { classifyAddress, isPublicAddress, literalAddress, refusalOf } from '../../src/events/address-class.js';

// Spellings are generated from the address's bytes, as an attacker who knows inet_aton and RFC 4291
// would write them, and each must be judged as the address it names.

type V4 = [number, number, number, number];

const int = (b: V4) => ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0;
const hex = (n: number) => n.toString(16);
const oct = (n: number) => `0${n.toString(8)}`;
const h16 = (hi: number, lo: number) => hex((hi << 8) | lo);

/** Every IPv4 spelling a URL parser (and inet_aton) reads as `b`. */
function v4Spellings(b: V4): string[] {
  const n = int(b);
  const low24 = n & 0xffffff;
  const low16 = n & 0xffff;
  return [
    b.join('.'),
    `${b.join('.')}.`,
    String(n),
    `0x${hex(n)}`,
    `0X${hex(n).toUpperCase()}`,
    oct(n),
    b.map(oct).join('.'),
    b.map((x) => `0x${hex(x)}`).join('.'),
    [oct(b[0]), `0x${hex(b[1])}`, b[2], oct(b[3])].join('.'),
    `${b[0]}.${b[1]}.${low16}`,
    `${b[0]}.${b[1]}.0x${hex(low16)}`,
    `${b[0]}.${low24}`,
    `0x${hex(b[0])}.${oct(low24)}`,
    `${b[0]}.${b[1]}.${b[2]}.${oct(b[3])}`,
  ];
}

/** The IPv6 spellings of an IPv4-mapped address. */
function mappedSpellings(b: V4): string[] {
  const d = b.join('.');
  const w = `${h16(b[0], b[1])}:${h16(b[2], b[3])}`;
  return [`::ffff:${d}`, `::FFFF:${w.toUpperCase()}`, `::ffff:${w}`, `0:0:0:0:0:ffff:${w}`, `0000:0000:0000:0000:0000:ffff:${d}`, `[::ffff:${d}]`];
}

/** IPv6 spellings that carry `b` in some other block (compatible, NAT64, 6to4, Teredo, SIIT). */
function carryingSpellings(b: V4): string[] {
  const d = b.join('.');
  const w = `${h16(b[0], b[1])}:${h16(b[2], b[3])}`;
  const flipped = b.map((x) => x ^ 0xff) as V4;
  return [
    `::${d}`,
    `[::${d}]`,
    `::${w}`,
    `0:0:0:0:0:0:${w}`,
    `64:ff9b::${d}`,
    `64:ff9b::${w}`,
    `[64:FF9B::${w.toUpperCase()}]`,
    `64:ff9b:1:${h16(b[0], b[1])}:${hex(b[2])}:${h16(b[3], 0)}::`,
    `2002:${w}::`,
    `2002:${w}:1::1`,
    `2001:0:4136:e378:8000:63bf:${h16(flipped[0], flipped[1])}:${h16(flipped[2], flipped[3])}`,
    `::ffff:0:${d}`,
  ];
}

const NOT_PUBLIC_V4: V4[] = [
  [127, 0, 0, 1],
  [127, 255, 255, 254],
  [10, 0, 0, 1],
  [172, 16, 5, 4],
  [172, 31, 255, 255],
  [192, 168, 1, 1],
  [169, 254, 169, 254],
  [100, 64, 0, 1],
  [0, 0, 0, 0],
  [0, 1, 2, 3],
  [255, 255, 255, 255],
  [224, 0, 0, 1],
  [239, 255, 255, 250],
  [192, 0, 2, 1],
  [198, 18, 0, 1],
  [240, 0, 0, 1],
];
const PUBLIC_V4: V4[] = [
  [8, 8, 8, 8],
  [93, 184, 216, 34],
  [1, 1, 1, 1],
  [151, 101, 1, 69],
];

describe('literalAddress', () => {
  it('reads every IPv4 spelling as the address it names', () => {
    for (const b of [...NOT_PUBLIC_V4, ...PUBLIC_V4]) for (const s of v4Spellings(b)) expect(literalAddress(s), s).toBe(b.join('.'));
  });

  it('reads bracketed and zoned IPv6, and leaves names (with or without a trailing dot) as names', () => {
    expect(literalAddress('[::127.0.0.1]')).toBe('::7f00:1');
    expect(literalAddress('fe80::1%eth0')).toBe('fe80::1%eth0');
    expect(literalAddress('[fe80::1%25eth0]')).toBe('fe80::1%eth0');
    for (const name of ['localhost', 'localhost.', 'example.com', '127.0.0.1.nip.io', '1.2.3.4.5', '08.0.0.1', '', '[]', 'a b', '127.0.0.1/x'])
      expect(literalAddress(name), name).toBeNull();
  });
});

describe('classifyAddress', () => {
  it('refuses every spelling of a non-public IPv4 address: plain, mapped and carried in IPv6', () => {
    let n = 0;
    for (const b of NOT_PUBLIC_V4) {
      for (const s of [...v4Spellings(b), ...mappedSpellings(b), ...carryingSpellings(b)]) {
        expect(isPublicAddress(s), s).toBe(false);
        n++;
      }
    }
    expect(n).toBeGreaterThan(500);
  });

  it('allows a public IPv4 address in every IPv4 and mapped spelling; the blocks that carry it are not plain public addresses', () => {
    for (const b of PUBLIC_V4) {
      for (const s of [...v4Spellings(b), ...mappedSpellings(b)]) expect(classifyAddress(s), s).toMatchObject({ address: b.join('.'), public: true });
      for (const s of carryingSpellings(b)) expect(isPublicAddress(s), s).toBe(false);
    }
  });

  it('names the IPv4 address a carrying block holds, and its range', () => {
    expect(refusalOf('[::127.0.0.1]')).toBe('[::127.0.0.1] (::7f00:1) is an IPv4-compatible address carrying 127.0.0.1 (a loopback address)');
    expect(classifyAddress('64:ff9b::10.0.0.1').words).toBe('a NAT64 address carrying 10.0.0.1 (a private address)');
    expect(classifyAddress('64:ff9b:1:a00:0:100::').words).toBe('a local NAT64 address carrying 10.0.0.1 (a private address)');
    expect(classifyAddress('2002:a9fe:a9fe::1').words).toBe('a 6to4 address carrying 169.254.169.254 (a link-local address)');
    expect(classifyAddress('2001:0:4136:e378:8000:63bf:80ff:fffe').words).toBe('a Teredo address carrying 127.0.0.1 (a loopback address)');
    expect(refusalOf('0x7f.1')).toBe('0x7f.1 (127.0.0.1) is a loopback address');
    expect(refusalOf('127.0.0.1')).toBe('127.0.0.1 is a loopback address');
  });

  it('refuses IPv6 outside global unicast or in a special block, in any spelling, zoned or not', () => {
    const v6 = [
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      'ff0e::1',
      '100::1',
      '2001:db8::1',
      '3fff::1',
      '4000::1',
      'fec0::1',
      '2001:20::1',
      'e000::1',
    ];
    for (const a of v6) {
      const words = ipaddr.parse(a).toNormalizedString();
      for (const s of [a, a.toUpperCase(), `[${a}]`, words, `${a}%eth0`, `[${a}%25lo]`]) expect(isPublicAddress(s), s).toBe(false);
    }
    for (const s of ['fe80::1%eth0', 'fe80::1%1', '2606:4700::1111%eth0']) expect(classifyAddress(s).words, s).toContain('zone id');
    expect(classifyAddress('0:0:0:0:0:0:0:1').words).toBe('a loopback address');
  });

  it('allows public IPv6 unicast in any spelling', () => {
    for (const a of ['2606:4700:4700::1111', '2a00:1450:4001:81b::200e', '2001:4860:4860::8888']) {
      const full = ipaddr.parse(a).toNormalizedString();
      for (const s of [a, a.toUpperCase(), `[${a}]`, full]) expect(isPublicAddress(s), s).toBe(true);
    }
  });

  it('gives every spelling of a random IPv4 address the verdict of its dotted form (2,000 addresses)', () => {
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return (seed >>> 16) & 0xff;
    };
    for (let i = 0; i < 2000; i++) {
      const b: V4 = [rnd(), rnd(), rnd(), rnd()];
      const expected = ipaddr.parse(b.join('.')).range() === 'unicast';
      for (const s of [...v4Spellings(b), ...mappedSpellings(b)]) expect(isPublicAddress(s), s).toBe(expected);
      for (const s of carryingSpellings(b)) expect(isPublicAddress(s), s).toBe(false);
    }
  });

  it('calls a name, or something that is no address, not public', () => {
    for (const s of ['localhost', 'localhost.', 'example.com', 'not-an-ip', '999.1.1.1', ':::1']) expect(isPublicAddress(s), s).toBe(false);
  });
});
