// Launches the machine's Debian Chromium through playwright-core (never a downloaded
// browser: `npx playwright install` cannot work here and is not used). Shared by
// `npm start -- --screenshot` and the e2e tests.
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.FACTLENS_CHROMIUM ?? '/usr/lib/chromium/chromium';

// Quiet, reproducible runs: no background requests, no first-run UI, /tmp instead of
// a small /dev/shm in containers.
export const CHROMIUM_ARGS = [
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-default-apps',
  '--disable-sync',
  '--disable-domain-reliability',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-dev-shm-usage',
];

/** Returns a launched headless Chromium (playwright Browser). */
export async function launchChromium(options = {}) {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`${CHROMIUM_PATH} not found: run scripts/bootstrap.sh (installs Debian's chromium)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    ...options,
  });
}
