// `npm start -- --screenshot FILE` builds what is missing, renders the demo in headless
// Chromium and exits, leaving a PNG of the whole page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, readFile, rm, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repo } from './helpers.mjs';

test('npm start -- --screenshot FILE writes a PNG of the rendered demo and exits', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'factlens-shot-'));
  try {
    const file = join(dir, 'demo.png');
    const { stdout } = await promisify(execFile)('npm', ['start', '--silent', '--', '--screenshot', file],
      { cwd: repo, timeout: 300000 });
    assert.match(stdout, /wrote .*demo\.png \(\d+ bytes\) from http:\/\/127\.0\.0\.1:\d+\/demo\//);
    const png = await readFile(file);
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    assert.equal(png.toString('latin1', 12, 16), 'IHDR');
    const width = png.readUInt32BE(16);
    const height = png.readUInt32BE(20);
    assert.equal(width, 1280);
    assert.ok(height >= 900, `height ${height}`);  // full page: the feed is taller than the viewport
    // A blank or error page compresses to a few kilobytes; the feed and editor do not.
    assert.ok(png.length > 100000, `only ${png.length} bytes`);
    assert.deepEqual(await readdir(dir), ['demo.png']);  // no temp file left behind
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('npm start refuses an unknown option with a usage message (exit 2)', async () => {
  await assert.rejects(
    promisify(execFile)('node', ['scripts/serve.mjs', '--bogus'], { cwd: repo }),
    (error) => error.code === 2 && /unknown option --bogus/.test(error.stderr));
});
