// The native size read from the configs real exports carry (values as in the diffusers configs of
// SD 1.5, SD 2.1, SDXL and SDXL-Turbo), and the fallbacks for exports without them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nativePixels, nativeSize } from './native-size.js';

const sd15Vae = { block_out_channels: [128, 256, 512, 512], sample_size: 512 };

test("the UNet's sample_size in latent cells times the VAE scale factor, per side", () => {
  assert.equal(nativePixels({ sample_size: 64 }, sd15Vae, 8), 512 * 512, 'SD 1.5');
  assert.equal(nativePixels({ sample_size: 96 }, { sample_size: 768 }, 8), 768 * 768, 'SD 2.1');
  assert.equal(nativePixels({ sample_size: 128 }, { sample_size: 1024 }, 8), 1024 * 1024, 'SDXL');
  // SDXL-Turbo's UNet was trained at 512 though its VAE config says 1024: the UNet wins.
  assert.equal(nativePixels({ sample_size: 64 }, { sample_size: 1024 }, 8), 512 * 512, 'SDXL-Turbo');
  assert.equal(nativePixels({ sample_size: 32 }, sd15Vae, 16), 512 * 512, 'another scale factor');
});

test('sample_size given as [height, width]', () => {
  assert.deepEqual(nativeSize({ sample_size: [96, 64] }, {}, 8), { width: 512, height: 768 });
  assert.deepEqual(nativeSize({}, { sample_size: [768, 512] }, 8), { width: 512, height: 768 });
  assert.deepEqual(nativeSize({}, {}, 8), { width: 512, height: 512 });
  assert.equal(nativePixels({ sample_size: [96, 64] }, {}, 8), 768 * 512);
  assert.equal(nativePixels({}, { sample_size: [768, 512] }, 8), 768 * 512);
});

test("without a usable UNet sample_size: the VAE's, else SD 1.x's 512×512", () => {
  assert.equal(nativePixels({}, { sample_size: 768 }, 8), 768 * 768);
  for (const bad of [undefined, 0, -64, 64.5, '64', [64], [64, 'x'], [64, 64, 64], null]) {
    assert.equal(nativePixels({ sample_size: bad }, { sample_size: 1024 }, 8), 1024 * 1024, String(bad));
    assert.equal(nativePixels({ sample_size: bad }, { sample_size: bad }, 8), 512 * 512, String(bad));
  }
  assert.equal(nativePixels({}, {}, 8), 512 * 512);
});
