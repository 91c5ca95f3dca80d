/**
 * A change to tenants, users or keys that cannot be made, said in the caller's words: the field it
 * is about, and the HTTP status the API answers with (400 bad input, 404 unknown, 409 conflict).
 * The CLI prints the same text and exits 2.
 */
export type IdentityErrorCode = 'invalid_request' | 'not_found' | 'conflict';

export class IdentityError extends Error {
  constructor(
    readonly code: IdentityErrorCode,
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'IdentityError';
  }

  get status(): 400 | 404 | 409 {
    return this.code === 'invalid_request' ? 400 : this.code === 'not_found' ? 404 : 409;
  }
}
