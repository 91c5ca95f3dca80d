/** The server token (RUNTRAIL_API_TOKEN) compared with what a request presents, in constant time. */
import { createHash, timingSafeEqual } from 'node:crypto';

function sha(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/** Compares in constant time (the hashes have one length whatever was sent). */
export function tokenMatches(given: string, expected: string): boolean {
  return timingSafeEqual(sha(given), sha(expected));
}
