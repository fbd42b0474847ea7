// Shared by the e2e tests: the demo's static server (with the test fixtures mounted)
// and the machine's headless Chromium.
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { startServer, DEMO_MOUNTS } from '../../scripts/serve.mjs';
import { launchChromium } from '../../scripts/chromium.mjs';

export const repo = fileURLToPath(new URL('../../', import.meta.url));

/** Serves web/ at /, rules/examples/ at /lists/, tests/fixtures/e2e/ at /fixtures/. */
export function serveRepo() {
  return startServer({
    mounts: { ...DEMO_MOUNTS, '/fixtures/': join(repo, 'tests/fixtures/e2e') },
  });
}

export { launchChromium, startServer };

/** Fails the test on any uncaught page error or console error. */
export function watchErrors(page) {
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  return errors;
}

/** The page's accessibility tree (what a screen reader gets), closed shadow roots
 *  included, as [{ role, name }]. */
export async function axNodes(page) {
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = await cdp.send('Accessibility.getFullAXTree');
  await cdp.detach();
  return nodes.filter((n) => !n.ignored)
    .map((n) => ({ role: n.role?.value, name: n.name?.value ?? '' }));
}
