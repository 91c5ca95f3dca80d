import { describe, expect, it } from 'vitest';
import { minimalBaseEnv, readExecLimits } from '../../src/tools/exec-config.js';

describe('exec limits from the environment', () => {
  it('uses the documented defaults', () => {
    expect(readExecLimits({})).toMatchObject({
      yieldMs: 10_000,
      maxOutputChars: 200_000,
      pendingMaxOutputChars: 30_000,
      tailChars: 2_000,
      jobTtlMs: 1_800_000,
      maxFinishedSessions: 50,
      timeoutSec: 1_800,
      killGraceMs: 3_000,
    });
  });

  it('clamps yield to 10–120000 ms and TTL to 1 min–3 h', () => {
    expect(readExecLimits({ RUNTRAIL_EXEC_YIELD_MS: '1' }).yieldMs).toBe(10);
    expect(readExecLimits({ RUNTRAIL_EXEC_YIELD_MS: '999999' }).yieldMs).toBe(120_000);
    expect(readExecLimits({ RUNTRAIL_EXEC_JOB_TTL_MS: '5' }).jobTtlMs).toBe(60_000);
    expect(readExecLimits({ RUNTRAIL_EXEC_JOB_TTL_MS: '99999999999' }).jobTtlMs).toBe(10_800_000);
  });

  it('reads output caps and ignores garbage', () => {
    const l = readExecLimits({ RUNTRAIL_EXEC_MAX_OUTPUT_CHARS: '5000', RUNTRAIL_EXEC_PENDING_MAX_OUTPUT_CHARS: 'lots' });
    expect(l.maxOutputChars).toBe(5000);
    expect(l.pendingMaxOutputChars).toBe(30_000);
  });
});

describe('minimal base environment', () => {
  it('passes what a shell needs and nothing secret', () => {
    const env = minimalBaseEnv({ PATH: '/bin', HOME: '/h', OPENAI_API_KEY: 'sk-x', AWS_SECRET_ACCESS_KEY: 'y', NODE_OPTIONS: '--x' });
    expect(env).toEqual({ PATH: '/bin', HOME: '/h', LANG: 'C.UTF-8' });
  });
});
