/**
 * Chinese word segmentation by jieba (jieba-rs compiled to WebAssembly, the `jieba-wasm` package):
 * a dictionary of some 350,000 words plus an HMM for words missing from it, where ICU's segmenter
 * splits unknown words into single characters. Loaded on first use; the same text always gives the
 * same words.
 */
import { createRequire } from 'node:module';

interface Jieba {
  cut(text: string, hmm: boolean): string[];
}

let jieba: Jieba | null = null;

/** The words of a Chinese text, punctuation included (callers read clause breaks from it). */
export function chineseWords(text: string): string[] {
  jieba ??= createRequire(import.meta.url)('jieba-wasm') as Jieba;
  return jieba.cut(text, true);
}
