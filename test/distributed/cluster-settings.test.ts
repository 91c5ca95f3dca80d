/** The variables of several nodes — both or neither, each checked, named when wrong. */
import { describe, expect, it } from 'vitest';
import { ClusterConfigError, clusterSettings } from '../../src/distributed/cluster-settings.js';
import { redactServiceUrl, ServiceUnavailableError } from '../../src/distributed/service-url.js';
import { toHttpError } from '../../src/server/http-error.js';

const both = { RUNTRAIL_REDIS_URL: 'redis://127.0.0.1:6379/2', RUNTRAIL_DATABASE_URL: 'postgres://u:pw@db:5432/runs' };

describe('clusterSettings', () => {
  it('is null without either variable: one process, no services', () => {
    expect(clusterSettings({})).toBeNull();
    expect(clusterSettings({ RUNTRAIL_REDIS_URL: ' ', RUNTRAIL_DATABASE_URL: '' })).toBeNull();
  });

  it('takes both URLs and the defaults', () => {
    expect(clusterSettings(both)).toEqual({
      redisUrl: both.RUNTRAIL_REDIS_URL,
      databaseUrl: both.RUNTRAIL_DATABASE_URL,
      schema: 'public',
      prefix: 'runtrail',
      stalledIntervalMs: 30_000,
      lockDurationMs: 30_000,
      reconcileMs: 10_000,
    });
  });

  it('refuses one without the other, naming both', () => {
    expect(() => clusterSettings({ RUNTRAIL_REDIS_URL: both.RUNTRAIL_REDIS_URL })).toThrow(/RUNTRAIL_REDIS_URL is set but RUNTRAIL_DATABASE_URL is not/);
    expect(() => clusterSettings({ RUNTRAIL_DATABASE_URL: both.RUNTRAIL_DATABASE_URL })).toThrow(/RUNTRAIL_DATABASE_URL is set but RUNTRAIL_REDIS_URL is not/);
  });

  it('names a URL of the wrong kind without its password', () => {
    const e = (() => {
      try {
        clusterSettings({ ...both, RUNTRAIL_DATABASE_URL: 'mysql://root:hunter2@db/x' });
      } catch (err) {
        return err as Error;
      }
      return null;
    })();
    expect(e).toBeInstanceOf(ClusterConfigError);
    expect(e!.message).toContain('RUNTRAIL_DATABASE_URL must start with postgres://');
    expect(e!.message).not.toContain('hunter2');
    expect(() => clusterSettings({ ...both, RUNTRAIL_REDIS_URL: 'http://localhost:6379' })).toThrow(/RUNTRAIL_REDIS_URL must start with redis:\/\//);
  });

  it('names a bad schema, prefix or interval with its value', () => {
    expect(() => clusterSettings({ ...both, RUNTRAIL_DATABASE_SCHEMA: 'Runs; DROP TABLE x' })).toThrow(
      /RUNTRAIL_DATABASE_SCHEMA must be a lowercase SQL identifier, got "Runs; DROP TABLE x"/,
    );
    expect(() => clusterSettings({ ...both, RUNTRAIL_REDIS_PREFIX: 'a b' })).toThrow(/RUNTRAIL_REDIS_PREFIX .* got "a b"/);
    expect(() => clusterSettings({ ...both, RUNTRAIL_STALLED_INTERVAL_MS: '5s' })).toThrow(
      /RUNTRAIL_STALLED_INTERVAL_MS must be a whole number of milliseconds ≥ 1, got "5s"/,
    );
    expect(() => clusterSettings({ ...both, RUNTRAIL_LOCK_DURATION_MS: '0' })).toThrow(/RUNTRAIL_LOCK_DURATION_MS/);
    expect(clusterSettings({ ...both, RUNTRAIL_RECONCILE_MS: '500' })!.reconcileMs).toBe(500);
  });
});

describe('a service that is away', () => {
  it('is shown without its password', () => {
    expect(redactServiceUrl('postgres://u:pw@db:5432/runs')).toBe('postgres://u:***@db:5432/runs');
    expect(redactServiceUrl('redis://:secret@cache:6379/3')).toBe('redis://:***@cache:6379/3');
    expect(redactServiceUrl('redis://cache:6379')).toBe('redis://cache:6379');
  });

  it('is a 503 with the seconds to wait before trying again', () => {
    const h = toHttpError(new ServiceUnavailableError('PostgreSQL', 'postgres://u:***@db/x', 'connect ECONNREFUSED'));
    expect(h.status).toBe(503);
    expect(h.code).toBe('service_unavailable');
    expect(h.message).toBe('PostgreSQL at postgres://u:***@db/x is unreachable: connect ECONNREFUSED');
    expect(h.details).toMatchObject({ service: 'PostgreSQL', retry_after_s: 5 });
  });
});
