/** The page tests' browser: Debian's chromium through playwright-core, on a profile of its own, with the page built. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

const CHROMIUM = process.env.RUNTRAIL_CHROMIUM || '/usr/bin/chromium';

export interface TestBrowser {
  ctx: BrowserContext;
  close(): Promise<void>;
}

/** Builds web/dist when it is missing, then starts a headless chromium (the flags the machine needs). */
export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync('web/dist/index.html')) spawnSync('npx', ['vite', 'build', '--config', 'web/vite.config.ts'], { stdio: 'inherit' });
  const profile = mkdtempSync(join(tmpdir(), 'runtrail-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    viewport: { width: 1280, height: 900 },
  });
  return {
    ctx,
    close: async () => {
      await ctx.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
