import Sentiment from 'sentiment';
import { describe, expect, it } from 'vitest';
import { afinnScore } from '../../../src/plugins/feedbacklens/analysis/afinn-score.js';

const pkg = new Sentiment();
const expected = (text: string) => {
  const r = pkg.analyze(text);
  return { score: r.score, comparative: r.comparative };
};

describe('afinnScore', () => {
  it('scores as the sentiment package: lexicon words summed, a negator before a word flips it', () => {
    expect(afinnScore('I love it, but the export is not good.')).toEqual(expected('I love it, but the export is not good.'));
    expect(afinnScore("don't like").score).toBe(-2);
    expect(afinnScore('Great!!! Works great').score).toBe(6);
    expect(afinnScore('')).toEqual({ score: 0, comparative: 0 });
  });

  it('the ASCII scan gives exactly the package score, whitespace and punctuation edge cases included', () => {
    const words = ['love', 'bad', 'not', "don't", 'good', 'hate', 'great', 'constructor', 'export', 'x', 'no', 'fail', 'LOVE', 'Bad'];
    const seps = [
      ' ',
      '  ',
      '\t',
      '\t\t',
      ' \t',
      '\r',
      '\r\n',
      '\n',
      '\v',
      '\f',
      '.',
      ',',
      '!',
      '?',
      '-',
      "'",
      '_',
      '/',
      '"',
      '(',
      ')',
      '',
      ' . ',
      '~',
      '#',
      '^',
      '=',
    ];
    let seed = 11;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
    for (let n = 0; n < 2000; n++) {
      let text = '';
      const parts = Math.floor(rnd() * 12);
      for (let i = 0; i < parts; i++) text += rnd() < 0.5 ? pick(words) : pick(seps);
      expect(afinnScore(text), JSON.stringify(text)).toEqual(expected(text));
    }
    for (const text of ['\tgood', 'good\t', 'not\tgood', 'not \tgood', '  not   good  ', 'constructor good', 'not', 'good\x00bad'])
      expect(afinnScore(text), JSON.stringify(text)).toEqual(expected(text));
  });

  it('non-ASCII text is scored by the package itself (emoji, accents)', () => {
    for (const text of ['I love it 😍', 'café is good', 'great\u00a0work']) expect(afinnScore(text), text).toEqual(expected(text));
  });
});
