import { defineConfig } from '@playwright/test';
import * as path from 'path';
import { CHROMIUM } from './chromium';

/**
 * Runs against a real controller started by `start-platform.sh` (local backend,
 * real JupyterLab processes) in Debian's Chromium; no browser is downloaded.
 */
const port = Number(process.env.CGU_UI_PORT ?? 8765);
// The platform's data folder, named once by the runner, which reads this file first:
// start-platform.sh (which makes it) and the workers inherit the variable, and the specs
// prepare notebooks' homes there (helpers.ts: galataFromStart).
process.env.CGU_UI_DATA ??= path.join('/tmp', `cgu-lab-ui-${port}-${process.pid}`);

export default defineConfig({
  testDir: './tests',
  timeout: 180_000,
  expect: { timeout: 30_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  outputDir: '../artifacts/ui-test-results',
  reporter: [
    ['list'],
    ['html', { outputFolder: '../artifacts/ui-report', open: 'never' }],
    // Read by scripts/test_failures.py for the summary that ends `make test`.
    ['json', { outputFile: '../artifacts/ui-results.json' }]
  ],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: CHROMIUM
  },
  webServer: {
    command: `./start-platform.sh ${port}`,
    url: `http://127.0.0.1:${port}/api/health`,
    timeout: 120_000,
    reuseExistingServer: false,
    // SIGTERM, not Playwright's default SIGKILL, so that start-platform.sh stops the
    // notebook servers it started and removes its data directory.
    gracefulShutdown: { signal: 'SIGTERM', timeout: 60_000 },
    stdout: 'pipe',
    stderr: 'pipe'
  }
});
