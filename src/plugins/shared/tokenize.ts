/** Word-level text processing shared by theme clustering, evidence selection and summaries. */

// English function words plus filler common in feedback; corpus-specific common words
// (e.g. the product's name) are removed by document frequency instead, not listed here.
const STOP_WORDS = new Set(
  `a about above after again against all almost also although always am an and any anyone anything are aren around as at
  back be became because been before being below between both but by can cannot could couldn did didn do does doesn doing
  don done down during each either else even ever every everything few for from further get gets getting give given go goes
  going gone got had hadn has hasn have haven having he her here hers herself him himself his how however i if im in into is
  isn it its itself ive just keep know last least less let like lot lots made make makes many may me might more most much
  must my myself need needs never new no nor not nothing now of off often ok okay on once one only or other others our ours
  ourselves out over own pretty quite rather really same see seem seems she should shouldn since so some someone something
  sometimes still such sure than that thats the their theirs them themselves then there these they thing things think this
  those though through thus to too took try trying two under until up upon us use used uses using very via want wants was
  wasn way we well went were weren what whatever when where whether which while who whom whose why will with within without
  won would wouldn yes yet you your yours yourself yourselves youre ve ll re d s t m also etc app please thanks thank
  take takes took taking time times day days week weeks today yesterday month months year ago every since anymore
  open opens opened opening click clicks clicked clicking tap taps tapped tried tries start starts started show shows
  showed shown tell told say says said find found put seeing looks look looking`
    .split(/\s+/)
    .filter(Boolean),
);

export function isStopWord(w: string): boolean {
  return STOP_WORDS.has(w);
}

const stemCache = new Map<string, string>();
const STEM_CACHE_MAX = 50_000;

/** Light suffix stripping so sync/syncing/synced and crash/crashes/crashed share one stem. */
export function stem(word: string): string {
  const hit = stemCache.get(word);
  if (hit !== undefined) return hit;
  const s = computeStem(word);
  // words repeat a lot across rows; a bounded memo keeps 10,000-row files fast
  if (stemCache.size >= STEM_CACHE_MAX) stemCache.clear();
  stemCache.set(word, s);
  return s;
}

function computeStem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  else if (w.length > 5 && w.endsWith('ly')) w = w.slice(0, -2);
  if (w.length > 3 && /([b-df-hj-np-tv-z])\1$/.test(w) && !/(ll|ss|zz)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 4 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

export interface Token {
  /** lower-cased surface form */
  word: string;
  stem: string;
  /** index in the full token stream, stop words included (for adjacency) */
  pos: number;
}

/** Longer "words" are ids, hashes or URLs, not vocabulary. */
const MAX_WORD = 30;
const CJK_RE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const WORD_RE = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;

/** Content tokens of a text: lower-cased, stop words, pure numbers and 1–2 letter words dropped. */
export function contentTokens(text: string): Token[] {
  const out: Token[] = [];
  let pos = 0;
  const lower = text.toLowerCase();
  // NFKC only matters outside ASCII; skipping it keeps 10,000-row files fast
  const src = /[^\x00-\x7f]/.test(lower) ? lower.normalize('NFKC') : lower;
  for (const m of src.matchAll(WORD_RE)) {
    const word = m[0].replace(/['’].*$/, '');
    if (CJK_RE.test(word)) {
      // scripts without spaces: overlapping character bigrams are the usual unit
      const chars = [...word];
      if (chars.length === 1) out.push({ word, stem: word, pos: pos++ });
      for (let i = 0; i + 1 < chars.length; i++) {
        const bi = chars[i] + chars[i + 1];
        out.push({ word: bi, stem: bi, pos: pos++ });
      }
      continue;
    }
    const p = pos++;
    if (word.length < 3 || word.length > MAX_WORD || /^\p{N}+$/u.test(word) || STOP_WORDS.has(word)) continue;
    out.push({ word, stem: stem(word), pos: p });
  }
  return out;
}

/** Unigram stems plus bigrams of adjacent content words ("calendar sync"), keyed by stem. */
export function termsOf(text: string): { terms: string[]; surfaces: Array<[string, string]> } {
  const toks = contentTokens(text);
  const terms: string[] = [];
  const surfaces: Array<[string, string]> = [];
  for (let i = 0; i < toks.length; i++) {
    terms.push(toks[i].stem);
    surfaces.push([toks[i].stem, toks[i].word]);
    const next = toks[i + 1];
    if (next && next.pos === toks[i].pos + 1 && next.stem !== toks[i].stem) {
      const key = `${toks[i].stem} ${next.stem}`;
      terms.push(key);
      surfaces.push([key, `${toks[i].word} ${next.word}`]);
    }
  }
  return { terms, surfaces };
}
