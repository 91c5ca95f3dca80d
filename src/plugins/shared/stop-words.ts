/**
 * Stop words per language. Every language but English takes its list from the `stopwords-iso`
 * package (58 languages, maintained). English keeps the list Runtrail's themes were tuned on:
 * stopwords-iso's English list also drops topic words feedback is about ("page", "web", "problem",
 * "fix"), which would cost English themes their names.
 */
import { createRequire } from 'node:module';

const ISO = createRequire(import.meta.url)('stopwords-iso') as Record<string, string[]>;

// English function words plus filler common in feedback; corpus-specific common words
// (e.g. the product's name) are removed by document frequency instead, not listed here.
const ENGLISH = new Set(
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

const cache = new Map<string, ReadonlySet<string>>([['en', ENGLISH]]);

/** The stop words of a language (ISO 639-1 code), lower-cased and NFKC-normalised; empty when unknown. */
export function stopWordsFor(lang: string): ReadonlySet<string> {
  let s = cache.get(lang);
  if (!s) {
    s = new Set((ISO[lang] ?? []).map((w) => w.toLowerCase().normalize('NFKC')));
    cache.set(lang, s);
  }
  return s;
}
