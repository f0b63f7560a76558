// The budget a model gets (configured per id, configured for all, or derived), the refusal of
// sizes over it, and the start-up check of the ids the configuration names.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isSwitchboardError, type SwitchboardError } from '@switchboard/errors';
import {
  NATIVE_PIXELS_FACTOR,
  checkPixelBudget,
  pixelBudget,
  unknownBudgetModels,
  type PixelBudgets,
} from './pixel-budget.js';

const sd15 = 512 * 512;
const sdxl = 1024 * 1024;

test("derived by default: 4 × native, so the API's default 1024×1024 fits SD 1.5 and SDXL allows 2048×2048", () => {
  const none: PixelBudgets = { models: {} };
  assert.equal(NATIVE_PIXELS_FACTOR, 4);
  assert.equal(pixelBudget('sd15', sd15, none), 1024 * 1024);
  assert.equal(pixelBudget('sdxl', sdxl, none), 2048 * 2048);
});

test('configured: the model id wins over the value for all, which wins over the derived one', () => {
  const budgets: PixelBudgets = { fallback: 500_000, models: { sdxl: 2_000_000 } };
  assert.equal(pixelBudget('sdxl', sdxl, budgets), 2_000_000);
  assert.equal(pixelBudget('sd15', sd15, budgets), 500_000);
  assert.equal(pixelBudget('sd15', sd15, { models: { sdxl: 2_000_000 } }), 4 * sd15);
  // An inherited property name is not a configured model.
  assert.equal(pixelBudget('toString', sd15, { models: {} }), 4 * sd15);
});

const refusal = (width: number, height: number, budget: number): SwitchboardError => {
  try {
    checkPixelBudget({ width, height }, budget, 8);
  } catch (error) {
    assert.ok(isSwitchboardError(error));
    return error;
  }
  assert.fail(`${width}×${height} within ${budget} was not refused`);
};

test('at the budget passes; one row or column more is invalid_request naming the longer side', () => {
  checkPixelBudget({ width: 1024, height: 1024 }, 1024 * 1024, 8);
  checkPixelBudget({ width: 2048, height: 512 }, 1024 * 1024, 8);
  for (const [width, height, param] of [
    [1032, 1024, 'width'],
    [1024, 1032, 'height'],
    [1032, 1032, 'width'],
    [2048, 520, 'width'],
    [72, 2048, 'height'],
  ] as const) {
    const error = refusal(width, height, 128 * 1024);
    assert.deepEqual([error.code, error.param], ['invalid_request', param], `${width}×${height}`);
  }
});

test('the message gives the size asked, the budget and a square that fits', () => {
  const { message } = refusal(1536, 1536, 1024 * 1024);
  assert.match(message, /^width: 1536×1536 is 2359296 pixels/);
  assert.match(message, /at most 1048576 pixels/);
  assert.match(message, /e\.g\. 1024×1024$/);
  assert.match(refusal(128, 128, 10_000).message, /e\.g\. 96×96$/, 'rounded down to the side multiple');
});

test('ids configured for models the repository lacks are reported', () => {
  const budgets: PixelBudgets = { fallback: 4096, models: { sd15: 4096, 'sd-xl': 4096 } };
  assert.deepEqual(unknownBudgetModels(budgets, ['sd15', 'sdxl']), ['sd-xl']);
  assert.deepEqual(unknownBudgetModels(budgets, ['sd15', 'sd-xl']), []);
  assert.deepEqual(unknownBudgetModels({ fallback: 4096, models: {} }, []), []);
});
