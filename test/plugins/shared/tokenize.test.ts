import { describe, expect, it } from 'vitest';
import { contentTokens } from '../../../src/plugins/shared/tokenize.js';

// A trailing " é" sends a text down the Unicode path (é alone is too short to be a token), so both
// paths can be compared on the same words.
const viaUnicode = (text: string) => contentTokens(`${text} é`);

describe('contentTokens', () => {
  it('reads ASCII text word by word: apostrophes cut a word, numbers, short and stop words dropped', () => {
    expect(contentTokens("Sync FAILED, rock'n'roll export it's2go 12345 o'neil's ab").map((t) => [t.word, t.pos])).toEqual([
      ['sync', 0],
      ['failed', 1],
      ['rock', 2],
      ['export', 3],
      ['2go', 5],
    ]);
  });

  it('the ASCII path finds exactly the tokens the Unicode path finds', () => {
    const alphabet = 'abcdefghijklmnopqrstuvwxyzABCXYZ0123456789\'  .,!?-_/"()\n\t';
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let n = 0; n < 500; n++) {
      let text = '';
      const len = Math.floor(rnd() * 80);
      for (let i = 0; i < len; i++) text += alphabet[Math.floor(rnd() * alphabet.length)];
      expect(contentTokens(text), JSON.stringify(text)).toEqual(viaUnicode(text));
    }
    for (const text of ["won't 'tis rock'n'roll", "''a'b''c", 'x1y2z3 999 0a0', 'under_score snake_case'])
      expect(contentTokens(text), text).toEqual(viaUnicode(text));
  });
});
