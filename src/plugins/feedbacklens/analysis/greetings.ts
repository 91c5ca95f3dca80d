/**
 * Greetings and sign-offs: how a message opens ("Hi team,", "Hola equipo,", "你好，") and closes
 * ("Thanks!", "Saludos", "谢谢"). They say nothing about what the row is about, and their words
 * ("team", "support") are also topic words elsewhere, so they are cut from the row's ends before
 * its terms are taken, not dropped as words everywhere.
 */

const OPENERS = [
  // English: hi / hello / hey / dear, and who is greeted
  /^\s*(?:hi|hello|hey|hiya|dear|good (?:morning|afternoon|evening))(?:\s+(?:team|there|all|everyone|folks|guys|support|devs?|developers?|support team|[A-Z][a-z]+ team))?\s*[,!:.\-–—]+\s*/iu,
  // Spanish
  /^\s*(?:hola|buenas(?: tardes| noches)?|buenos días|estimad[oa]s?)(?:\s+(?:equipo|a todos|soporte|desarrolladores))?\s*[,!:.\-–—]+\s*/iu,
  // Chinese
  /^\s*(?:你好|您好|大家好|各位好|开发者你好|客服你好|哈喽)\s*[，,！!：:。]*\s*/u,
];

const CLOSERS = [
  /\s*[,.!\-–—]?\s*(?:thanks(?: a lot| in advance)?|thank you(?: so much)?|many thanks|cheers|best(?: regards| wishes)?|kind regards|regards|br|thx)\s*[.!]*\s*$/iu,
  /\s*[,.!\-–—]?\s*(?:gracias(?: de antemano)?|muchas gracias|saludos(?: cordiales)?|un saludo)\s*[.!]*\s*$/iu,
  /\s*[，,。！!]?\s*(?:谢谢(?:你们|大家)?|多谢|辛苦了|感谢)\s*[。！!]*\s*$/u,
];

const TAIL = 48;

/** The text without its opening greeting and closing sign-off (each cut once). */
export function withoutGreetings(text: string): string {
  let t = text;
  for (const re of OPENERS) {
    const cut = t.replace(re, '');
    if (cut !== t) {
      t = cut;
      break;
    }
  }
  // a sign-off is the last few words: only the tail is searched (the pattern is anchored at the end)
  const at = Math.max(0, t.length - TAIL);
  const tail = t.slice(at);
  for (const re of CLOSERS) {
    const cut = tail.replace(re, '');
    if (cut !== tail) return t.slice(0, at) + cut;
  }
  return t;
}
