// Reading a compiled form's section table, for `npm run bench` and the scale tests
// (the layout wasm/README gives: magic, version, section count, then each
// section's tag, length and bytes).

/** Returns the sizes of the form's sections, by tag ({ RULE: n, ... }). */
export function sectionSizes(form) {
  const view = new DataView(form.buffer, form.byteOffset, form.byteLength);
  const sizes = {};
  let at = 12;
  for (let i = 0; i < view.getUint32(8, true); i++) {
    const tag = String.fromCharCode(...form.subarray(at, at + 4));
    sizes[tag] = view.getUint32(at + 4, true);
    at += 8 + sizes[tag];
  }
  return sizes;
}
