/** A server that must not start as it is configured (a weak token, a public address without one): the
 *  message says what to change; the CLI prints it without a stack and exits 2. */
export class ServerConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServerConfigError';
  }
}
