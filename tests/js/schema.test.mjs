// The JSON Schema (rules/schema.json) and the engine's parser agree: both accept the
// valid fixture lists and both reject the invalid ones. Lists with defects a schema
// cannot express (duplicate ids, bad RE2 syntax, ...) are rejected by the parser only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { createEngine, FactlensError } from 'factlens';

const root = new URL('../../', import.meta.url);
const read = (path) => readFileSync(new URL(path, root), 'utf8');
const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(read('rules/schema.json')));
const files = (dir) => readdirSync(new URL(dir, root)).filter((f) => f.endsWith('.json') && f !== 'expected.json');

function parserError(engine, text) {
  try {
    // Unload again: the fixtures share list ids and versions, and the engine refuses
    // a loaded version coming back with other content.
    engine.unloadList(engine.loadList(text, { allowUnsigned: true }).id);
    return null;
  } catch (error) {
    assert.ok(error instanceof FactlensError);
    return error;
  }
}

test('schema and parser both accept the valid lists and the demo list', async () => {
  const engine = await createEngine();
  const valid = files('tests/fixtures/lists/valid/').map((f) => `tests/fixtures/lists/valid/${f}`);
  assert.ok(valid.length >= 4);
  for (const path of [...valid, 'rules/examples/demo.json']) {
    const text = read(path);
    assert.ok(validate(JSON.parse(text)), `${path}: schema says ${ajv.errorsText(validate.errors)}`);
    assert.equal(parserError(engine, text), null, `${path}: parser rejects it`);
  }
  engine.dispose();
});

test('schema and parser both reject every invalid list, the parser naming where', async () => {
  const engine = await createEngine();
  const expected = JSON.parse(read('tests/fixtures/lists/invalid/expected.json'));
  const names = files('tests/fixtures/lists/invalid/');
  assert.deepEqual(names.sort(), Object.keys(expected).sort(), 'expected.json covers every file');
  for (const name of names) {
    const text = read(`tests/fixtures/lists/invalid/${name}`);
    let doc = null;
    try { doc = JSON.parse(text); } catch { /* a syntax error: the schema cannot see it either */ }
    if (doc !== null) assert.ok(!validate(doc), `${name}: schema accepts it`);
    const error = parserError(engine, text);
    assert.ok(error, `${name}: parser accepts it`);
    assert.equal(error.kind, expected[name].kind, `${name}: ${error.message}`);
    assert.ok(error.message.includes(expected[name].where), `${name}: "${error.message}" lacks "${expected[name].where}"`);
  }
  engine.dispose();
});

test('defects beyond JSON Schema are rejected by the parser', async () => {
  const engine = await createEngine();
  const expected = JSON.parse(read('tests/fixtures/lists/semantic-invalid/expected.json'));
  for (const [name, want] of Object.entries(expected)) {
    const error = parserError(engine, read(`tests/fixtures/lists/semantic-invalid/${name}`));
    assert.ok(error, `${name}: parser accepts it`);
    assert.equal(error.kind, want.kind, `${name}: ${error.message}`);
    assert.ok(error.message.includes(want.where), `${name}: "${error.message}" lacks "${want.where}"`);
  }
  engine.dispose();
});
