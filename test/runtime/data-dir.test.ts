import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultDataDir } from '../../src/runtime/data-dir.js';

describe('defaultDataDir', () => {
  it('is ./.runtrail, or RUNTRAIL_DATA_DIR resolved against the cwd', () => {
    expect(defaultDataDir({}, '/srv/app')).toBe(join('/srv/app', '.runtrail'));
    expect(defaultDataDir({ RUNTRAIL_DATA_DIR: '  ' }, '/srv/app')).toBe(join('/srv/app', '.runtrail'));
    expect(defaultDataDir({ RUNTRAIL_DATA_DIR: 'data' }, '/srv/app')).toBe(resolve('/srv/app', 'data'));
    expect(defaultDataDir({ RUNTRAIL_DATA_DIR: '/var/lib/runtrail' }, '/srv/app')).toBe('/var/lib/runtrail');
  });
});
