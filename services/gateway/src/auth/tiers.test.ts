import assert from 'node:assert/strict';
import { test } from 'node:test';
import { policyPath } from './tiers.js';

test('policy paths fold case, escapes, repeated and trailing slashes', () => {
  for (const path of ['/animate', '/Animate', '/ANIMATE/', '//animate', '/%61nimate', '/anim%41te//']) {
    assert.equal(policyPath(path), '/animate', path);
  }
  assert.equal(policyPath('/animate%2Fjob-1'), '/animate/job-1');
  assert.equal(policyPath('/Animate//Job-1/'), '/animate/job-1');
  assert.equal(policyPath('/'), '/');
  assert.equal(policyPath('/%E0%A4%A'), '/%e0%a4%a', 'a malformed escape is kept, not thrown');
});
