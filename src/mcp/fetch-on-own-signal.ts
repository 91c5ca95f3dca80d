/**
 * fetch for the MCP SDK's HTTP transports. They pass one signal, living as long as the transport,
 * to every request, and undici's Request keeps an abort listener on it until that Request is
 * garbage-collected: thousands of calls on one connection pile up thousands of listeners (and
 * MaxListenersExceededWarning past the 1,500 undici allows). Each request gets a signal of its own
 * that follows the transport's: a dependent signal (`AbortSignal.any`), which the transport's holds
 * only weakly and without a listener.
 */
export function fetchOnOwnSignal(url: string | URL, init?: RequestInit): Promise<Response> {
  return fetch(url, init?.signal ? { ...init, signal: AbortSignal.any([init.signal]) } : init);
}
