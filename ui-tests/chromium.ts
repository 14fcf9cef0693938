import type { LaunchOptions } from '@playwright/test';

/**
 * How the UI tests start Debian's Chromium (no browser is downloaded): headless,
 * and quiet about hosts that cannot be reached from here.
 */
export const CHROMIUM: LaunchOptions = {
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync'
  ]
};
