import { describe, expect, it } from 'vitest';
import { APICallError, RetryError } from 'ai';
import { diagnoseProviderError, redactSecrets } from '../../src/providers/provider-errors.js';

const ctx = { provider: 'openai', model: 'gpt-4o-mini', keyEnvVar: 'OPENAI_API_KEY', secrets: ['sk-live-abcdef123456'] };
const apiError = (statusCode: number, body: unknown, headers: Record<string, string> = {}) =>
  new APICallError({
    message: 'call failed',
    url: 'https://api.example/v1',
    requestBodyValues: {},
    statusCode,
    responseHeaders: headers,
    responseBody: JSON.stringify(body),
  });

describe('diagnoseProviderError', () => {
  it.each([
    [401, {}, 'auth', false],
    [403, {}, 'auth', false],
    [429, {}, 'rate_limit', true],
    [503, {}, 'overload', true],
    [529, {}, 'overload', true],
    [400, { error: { message: "This model's maximum context length is 8192 tokens" } }, 'context_length', false],
    // Anthropic, when input + max_tokens is over the window
    [
      400,
      {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'input length and `max_tokens` exceed context limit: 198000 + 32768 > 200000, decrease input length or `max_tokens` and try again',
        },
      },
      'context_length',
      false,
    ],
    [400, { error: { message: 'unknown parameter foo' } }, 'bad_request', false],
    [404, { error: { message: 'model not found' } }, 'bad_request', false],
    [500, { error: { message: 'internal' } }, 'provider_error', true],
  ])('HTTP %i → %s', (status, body, code, retryable) => {
    expect(diagnoseProviderError(apiError(status, body), ctx)).toMatchObject({ code, retryable, severity: 'error' });
  });

  it('reads the error inside a RetryError', () => {
    const err = new RetryError({ message: 'gave up', reason: 'maxRetriesExceeded', errors: [apiError(429, {})] });
    expect(diagnoseProviderError(err, ctx).code).toBe('rate_limit');
  });

  it('maps insufficient_quota to a rate_limit that retrying will not fix', () => {
    const d = diagnoseProviderError(apiError(429, { error: { message: 'You exceeded your current quota', code: 'insufficient_quota' } }), ctx);
    expect(d).toMatchObject({ code: 'rate_limit', retryable: false });
  });

  it('maps undici connection errors to network', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    const err = new TypeError('fetch failed', { cause });
    expect(diagnoseProviderError(err, ctx)).toMatchObject({ code: 'network', retryable: true });
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND api.nowhere'), { code: 'ENOTFOUND' });
    expect(diagnoseProviderError(dns, ctx)).toMatchObject({ code: 'network' });
  });

  it('maps in-stream error objects by their type', () => {
    expect(diagnoseProviderError({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, ctx).code).toBe('overload');
    expect(diagnoseProviderError({ message: 'slow', type: 'requests', code: 'rate_limit_exceeded' }, ctx).code).toBe('rate_limit');
  });

  it('never puts a key in summary, detail or hint', () => {
    const d = diagnoseProviderError(apiError(401, { error: { message: 'Incorrect API key provided: sk-live-abcdef123456.' } }), ctx);
    expect(JSON.stringify(d)).not.toContain('sk-live');
    expect(d.hint).toContain('OPENAI_API_KEY');
    const thrown = diagnoseProviderError(new Error('header Authorization: Bearer abc.def.ghi failed'), ctx);
    expect(thrown.detail).not.toContain('abc.def.ghi');
  });

  it('an AbortError is aborted, not a failure to retry', () => {
    const e = Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
    expect(diagnoseProviderError(e, ctx)).toMatchObject({ code: 'aborted', retryable: false, severity: 'warning' });
  });

  it('anything else is provider_error', () => {
    expect(diagnoseProviderError('weird', ctx)).toMatchObject({ code: 'provider_error', detail: 'weird' });
    expect(diagnoseProviderError(undefined, ctx)).toMatchObject({ code: 'provider_error' });
  });
});

describe('redactSecrets', () => {
  it('removes configured secrets and key-shaped tokens, keeping the rest', () => {
    expect(redactSecrets('key=mysecretvalue!', ['mysecretvalue'])).toBe('key=[redacted]!');
    expect(redactSecrets('Incorrect API key provided: sk-proj-AbC***xyz.')).toBe('Incorrect API key provided: [redacted].');
    expect(redactSecrets('plain text')).toBe('plain text');
  });
});
