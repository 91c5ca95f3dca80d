/**
 * Past a WebSocket client's queue bound, waits for its send buffer to come back under the bound while
 * the client reads. ws has no drain event, so the buffer is polled. A client is given up on only after
 * a whole window in which it took nothing: a large frame (a long final answer) over a slow link is
 * delivered as long as the client keeps reading, however long that takes in all.
 */

/** What is read of a ws WebSocket. */
export interface BufferedSocket {
  readonly bufferedAmount: number;
  readonly readyState: number;
  readonly OPEN: number;
}

/** How often the buffer is looked at while waiting. */
const POLL_MS = 5;

/** True once `socket.bufferedAmount` is at most `maxBytes`; false when `ms` went by with nothing taken from it, or it closed. */
export async function caughtUp(socket: BufferedSocket, maxBytes: number, ms: number): Promise<boolean> {
  let least = socket.bufferedAmount;
  let giveUpAt = Date.now() + ms;
  while (socket.bufferedAmount > maxBytes) {
    if (socket.readyState !== socket.OPEN) return false;
    const now = socket.bufferedAmount;
    if (now < least) {
      // the client read something: a new window starts
      least = now;
      giveUpAt = Date.now() + ms;
    } else if (Date.now() > giveUpAt) return false;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return true;
}
