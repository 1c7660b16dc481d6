import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryStore } from '@cairn/core';
import { MODES, skip, withStore } from './support/fixture.js';
import { outcome, scenario } from './support/scenario.js';

for (const mode of MODES) {
  describe(`parity with the memory store (${mode.title})`, { skip }, () => {
    it('answers every call of a scripted life exactly like the reference', async () => {
      await withStore({ cluster: mode.cluster }, async ({ store }) => {
        const memory = createMemoryStore();
        const t0 = 1_750_000_000_000;
        for (const [title, call] of scenario(t0)) {
          const expected = await outcome(() => call(memory));
          const actual = await outcome(() => call(store));
          assert.deepStrictEqual(actual, expected, title);
        }
      });
    });
  });
}
