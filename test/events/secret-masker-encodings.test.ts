import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SECRET_MASK, SecretMasker } from '../../src/events/secret-masker.js';

// A provider key, a password with characters that encode oddly, and a short token just long enough to register.
const SECRETS = ['sk-proj-Zq7tK2mW9xR4vB8nL3pJ6hG1fD5sA0', 'p@ss/w+rd:ÿ"é€ 9!', 'tok-8c1d'];

function masker(): SecretMasker {
  const m = new SecretMasker();
  for (const s of SECRETS) expect(m.register(s, 'TEST')).toBe(true);
  return m;
}

/** A small seeded generator (mulberry32), so a failing case can be replayed from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function wrap(text: string, width: number, nl: string, indent = ''): string {
  const lines: string[] = [];
  for (let i = 0; i < text.length; i += width) lines.push(indent + text.slice(i, i + width));
  return lines.join(nl);
}

/** What an attacker recovers from the masked text: every base64/base64url/hex run in it, decoded. */
function decodedLeftovers(masked: string): string {
  const flat = masked.replace(/\\r|\\n|[\s]/g, '');
  const parts = flat.split(SECRET_MASK);
  const out: string[] = [];
  for (const p of parts) {
    const b64 = p.replace(/[^A-Za-z0-9+/_-]/g, '');
    out.push(Buffer.from(b64.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('latin1'));
    out.push(Buffer.from(b64, 'base64').toString('utf8'));
    const hex = p.replace(/\\x|0x|[^0-9a-fA-F]/g, '');
    out.push(Buffer.from(hex, 'hex').toString('utf8'), Buffer.from(hex.slice(1), 'hex').toString('utf8'));
  }
  return out.join('\n');
}

/** The part of a secret masking must hide (the encoded groups at its very ends mix with the bytes around it). */
function middle(secret: string): string {
  return secret.length > 10 ? secret.slice(3, -3) : secret.slice(2, -2);
}

function expectHidden(m: SecretMasker, secret: string, text: string, what: string): void {
  const out = m.mask(text);
  expect(out, what).toContain(SECRET_MASK);
  expect(decodedLeftovers(out), `${what}\n${out}`).not.toContain(middle(secret));
}

describe('masking encoded secrets across line wraps', () => {
  it('base64 and base64url, padded or not, at the three alignments, wrapped at every width from 1 to 80 with \\n, \\r\\n, a lone \\r or indentation', () => {
    const m = masker();
    const next = rng(43);
    let cases = 0;
    for (const secret of SECRETS) {
      for (const prefix of ['', 'u:', 'ab:', 'abc:', 'user:pass:']) {
        const payload = Buffer.from(`${prefix}${secret}${['', 'x', 'yz'][cases % 3]}`);
        for (const enc of ['base64', 'base64url'] as const) {
          const body = payload.toString(enc);
          for (const padded of [body, body.replace(/=+$/, '')]) {
            for (let width = 1; width <= 80; width += 1 + Math.floor(next() * 6)) {
              const nl = ['\n', '\r\n', '\r', '\n    ', ' \n\t'][Math.floor(next() * 5)];
              expectHidden(m, secret, `data: ${wrap(padded, width, nl)}\nend`, `${enc} w=${width} prefix=${prefix} nl=${JSON.stringify(nl)}`);
              cases++;
            }
          }
        }
      }
    }
    expect(cases).toBeGreaterThan(500);
  });

  it('what the real tools print: base64 -w 76, base64 -w 1, basenc --base64url, openssl base64 (64 columns, PEM-like)', () => {
    const m = masker();
    for (const secret of SECRETS) {
      for (const prefix of ['', 'a', 'ab']) {
        const input = `${prefix}${secret}\n`;
        for (const [cmd, args] of [
          ['base64', ['-w', '76']],
          ['base64', ['-w', '1']],
          ['basenc', ['--base64url', '-w', '7']],
        ] as const) {
          // padded with enough text that base64 -w 76 really wraps inside the secret
          const long = `${'x'.repeat(50)}${input}`;
          for (const text of [input, long]) {
            const printed = execFileSync(cmd, [...args], { input: text }).toString();
            expectHidden(m, secret, printed, `${cmd} ${args.join(' ')} ${JSON.stringify(text.slice(0, 8))}`);
          }
        }
        const pem = `-----BEGIN SECRET-----\n${execFileSync('openssl', ['base64'], { input: `${'k'.repeat(40)}${input}` }).toString()}-----END SECRET-----\n`;
        expectHidden(m, secret, pem, 'openssl base64');
      }
    }
  });

  it('inside a JSON string, where the wraps are the two characters \\n (an HTTP answer, events.jsonl)', () => {
    const m = masker();
    for (const secret of SECRETS) {
      for (const width of [3, 64, 76]) {
        const b64 = Buffer.from(`${'q'.repeat(width)}${secret}`).toString('base64');
        expectHidden(m, secret, JSON.stringify({ out: wrap(b64, width, '\n') }), `json w=${width}`);
        expectHidden(m, secret, JSON.stringify({ out: wrap(b64, width, '\r\n') }), `json crlf w=${width}`);
      }
    }
  });

  it('hex in lower, upper and mixed case, at an odd digit offset, with separators and prefixes, wrapped', () => {
    const m = masker();
    const next = rng(7);
    for (const secret of SECRETS) {
      const hex = Buffer.from(secret).toString('hex');
      const mixed = [...hex].map((c) => (next() < 0.5 ? c.toUpperCase() : c)).join('');
      const pairs = hex.match(/../g)!;
      const forms = [
        hex,
        hex.toUpperCase(),
        mixed,
        `f${hex}0`,
        pairs.join(':'),
        pairs.join(' '),
        pairs.map((p) => `\\x${p}`).join(''),
        pairs.map((p) => `0x${p}`).join(', '),
        pairs.map((p) => `%${p.toUpperCase()}`).join(''),
        wrap(hex, 7, '\n'),
        wrap(pairs.join(' '), 24, '\r\n  '),
      ];
      for (const f of forms) expectHidden(m, secret, `digest: ${f} (done)`, `hex ${f.slice(0, 24)}`);
    }
  });

  it.skipIf(!existsSync('/usr/bin/xxd'))('what xxd -p, xxd -p -u and od -An -tx1 print', () => {
    const m = masker();
    for (const secret of SECRETS) {
      for (const [cmd, args] of [
        ['xxd', ['-p']],
        ['xxd', ['-p', '-u']],
        ['od', ['-An', '-tx1']],
      ] as const) {
        const printed = execFileSync(cmd, [...args], { input: `${'z'.repeat(21)}${secret}` }).toString();
        expectHidden(m, secret, printed, `${cmd} ${args.join(' ')}`);
      }
    }
  });

  it('leaves ordinary multi-line text, hex digests and base64 of other data as they are', () => {
    const m = masker();
    const texts = [
      'line one\nline two\r\n  indented three\n',
      `sha256: ${'ab'.repeat(32)}\n${Buffer.from('some other payload that is not secret at all').toString('base64')}\n`,
      JSON.stringify({ lines: 'a\nb\nc', n: 1 }),
    ];
    for (const t of texts) expect(m.mask(t)).toBe(t);
  });

  it('a secret broken by wraps between other wrapped text keeps the text around it', () => {
    const m = masker();
    const b64 = Buffer.from(SECRETS[0]).toString('base64');
    const text = `before\n${wrap(b64, 10, '\n')}\nafter`;
    const out = m.mask(text);
    expect(out.startsWith('before\n')).toBe(true);
    expect(out.endsWith('\nafter')).toBe(true);
  });
});
