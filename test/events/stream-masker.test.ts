import { describe, expect, it } from 'vitest';
import { SECRET_MASK, SecretMasker } from '../../src/events/secret-masker.js';
import { StreamMasker } from '../../src/events/stream-masker.js';

const SECRET = 'sk-proj-Zq7tK2mW9xR4vB8nL3pJ6hG1fD5sA0';

function masker(): SecretMasker {
  const m = new SecretMasker();
  m.register(SECRET, 'TEST');
  return m;
}

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

/** Each piece as a reader would see it (pushed, then the end), and all of them together. */
function streamed(m: SecretMasker, pieces: string[]): { each: string[]; whole: string } {
  const s = new StreamMasker(m);
  const each = pieces.map((p) => s.push(p));
  each.push(s.end());
  return { each, whole: each.join('') };
}

/** No piece, and no two neighbouring pieces together, show more than one character of the secret's text. */
function expectNoPart(each: string[], secret: string, what: string): void {
  const joined = each.join('');
  for (let len = 2; len <= secret.length; len++) {
    for (let i = 0; i + len <= secret.length; i++) {
      const part = secret.slice(i, i + len);
      if (len >= 4 && joined.includes(part)) throw new Error(`${what}: "${part}" got out in ${JSON.stringify(each)}`);
    }
  }
}

describe('StreamMasker', () => {
  it('a secret cut into two pieces at every position is masked, and no piece shows its start', () => {
    const m = masker();
    for (let cut = 1; cut < SECRET.length; cut++) {
      const text = `key: ${SECRET} done`;
      const at = 5 + cut;
      const { each, whole } = streamed(m, [text.slice(0, at), text.slice(at)]);
      expect(whole, `cut ${cut}`).toBe(`key: ${SECRET_MASK} done`);
      expectNoPart(each, SECRET, `cut ${cut}`);
    }
  });

  it('one character per piece, and random pieces over many seeds, with base64 and hex forms wrapped', () => {
    const m = masker();
    const b64 = Buffer.from(`user:${SECRET}`).toString('base64');
    const texts = [
      `export KEY=${SECRET}\nnext line\n`,
      `auth ${b64.replace(/(.{20})/g, '$1\n')} end`,
      `hex ${Buffer.from(SECRET)
        .toString('hex')
        .toUpperCase()
        .replace(/(.{16})/g, '$1\r\n')} end`,
    ];
    for (const text of texts) {
      const ones = streamed(m, [...text]);
      expect(ones.whole).toContain(SECRET_MASK);
      expect(ones.whole).toBe(m.mask(text));
      for (let seed = 1; seed <= 200; seed++) {
        const next = rng(seed);
        const pieces: string[] = [];
        for (let i = 0; i < text.length; ) {
          const n = 1 + Math.floor(next() * 12);
          pieces.push(text.slice(i, i + n));
          i += n;
        }
        const { each, whole } = streamed(m, pieces);
        expect(whole, `seed ${seed}`).toBe(m.mask(text));
        expectNoPart(each, SECRET, `seed ${seed}`);
      }
    }
  });

  it('text without secrets comes out whole, piece by piece, and only a possible start is held', () => {
    const m = masker();
    const s = new StreamMasker(m);
    expect(s.push('hello world\n')).toBe('hello world\n');
    expect(s.push('Password: ')).toBe('Password: ');
    // "sk-p" may start the secret: held until the next piece says otherwise
    expect(s.push('use sk-p')).toBe('use ');
    expect(s.push('ython instead')).toBe('sk-python instead');
    expect(s.end()).toBe('');
  });

  it('with no secret registered it holds nothing', () => {
    const s = new StreamMasker(new SecretMasker());
    expect(s.push('sk-proj-')).toBe('sk-proj-');
  });
});

describe('SecretMasker.maskCutFront', () => {
  it('masks what is left of a secret at the front of a cut text, wrapped or not', () => {
    const m = masker();
    for (let k = 4; k < SECRET.length; k++) {
      const text = `${SECRET.slice(-k)}\nrest of the output`;
      expect(m.maskCutFront(text), `k=${k}`).toBe(`${SECRET_MASK}\nrest of the output`);
    }
    const hex = Buffer.from(SECRET).toString('hex');
    expect(m.maskCutFront(`${hex.slice(-30, -10)}\n${hex.slice(-10)} tail`)).toBe(`${SECRET_MASK} tail`);
    expect(m.maskCutFront('ordinary output')).toBe('ordinary output');
  });
});
