import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inputEvents } from './live-view.js';
import { InvalidViewerMessage, parseViewerMessage } from './viewer-messages.js';

const refused = (raw: string) => assert.throws(() => parseViewerMessage(raw), InvalidViewerMessage, raw);

test('the known messages parse as they are', () => {
  const mouse = { type: 'mouse', action: 'down', x: 0.5, y: 1, button: 'left', modifiers: 0 };
  assert.deepEqual(parseViewerMessage(JSON.stringify(mouse)), mouse);
  const wheel = { type: 'wheel', x: 0, y: 0.25, dx: 0, dy: -120, modifiers: 8 };
  assert.deepEqual(parseViewerMessage(JSON.stringify(wheel)), wheel);
  const key = { type: 'key', action: 'up', key: 'é', code: '', keyCode: 0, modifiers: 15 };
  assert.deepEqual(parseViewerMessage(JSON.stringify(key)), key);
});

test('anything else is refused whole: unknown types and fields, ranges, control characters, size', () => {
  refused('not json');
  refused('[]');
  refused('null');
  refused(JSON.stringify({ type: 'cdp', method: 'Runtime.evaluate' }));
  refused(
    JSON.stringify({
      type: 'mouse',
      action: 'down',
      x: 0.5,
      y: 0.5,
      button: 'left',
      modifiers: 0,
      method: 'x',
    }),
  );
  refused(JSON.stringify({ type: 'mouse', action: 'drag', x: 0.5, y: 0.5, button: 'left', modifiers: 0 }));
  refused(JSON.stringify({ type: 'mouse', action: 'down', x: 1.5, y: 0.5, button: 'left', modifiers: 0 }));
  refused(JSON.stringify({ type: 'mouse', action: 'down', x: '0.5', y: 0.5, button: 'left', modifiers: 0 }));
  refused(JSON.stringify({ type: 'mouse', action: 'down', x: 0.5, y: 0.5, button: 'back', modifiers: 0 }));
  refused(JSON.stringify({ type: 'mouse', action: 'down', x: 0.5, y: 0.5, button: 'left', modifiers: 16 }));
  refused(JSON.stringify({ type: 'wheel', x: 0, y: 0, dx: 0, dy: 1e9, modifiers: 0 }));
  refused(JSON.stringify({ type: 'key', action: 'down', key: '\u0000', code: '', keyCode: 0, modifiers: 0 }));
  refused(
    JSON.stringify({ type: 'key', action: 'down', key: 'a'.repeat(33), code: '', keyCode: 0, modifiers: 0 }),
  );
  refused(
    JSON.stringify({ type: 'key', action: 'down', key: 'a', code: 'KeyA', keyCode: 300, modifiers: 0 }),
  );
  refused(
    JSON.stringify({
      type: 'key',
      action: 'down',
      key: 'a',
      code: 'KeyA',
      keyCode: 65,
      modifiers: 0,
      pad: 'x'.repeat(2000),
    }),
  );
});

test('points are scaled from the picture to the viewport; keys type text only when printable', () => {
  const picture = { width: 800, height: 600 };
  const [moved, pressed, released] = inputEvents(
    { type: 'mouse', action: 'click', x: 0.5, y: 0.25, button: 'left', modifiers: 0 },
    picture,
  );
  assert.deepEqual([moved!.x, moved!.y], [400, 150]);
  assert.equal(pressed!.type, 'mousePressed');
  assert.equal(released!.type, 'mouseReleased');
  const [wheel] = inputEvents({ type: 'wheel', x: 1, y: 1, dx: 0, dy: 100, modifiers: 0 }, picture);
  assert.deepEqual([wheel!.type, wheel!.x, wheel!.y, wheel!.deltaY], ['mouseWheel', 800, 600, 100]);
  const [a] = inputEvents(
    { type: 'key', action: 'down', key: 'a', code: 'KeyA', keyCode: 65, modifiers: 0 },
    picture,
  );
  assert.deepEqual([a!.type, a!.text], ['keyDown', 'a']);
  const [left] = inputEvents(
    { type: 'key', action: 'down', key: 'ArrowLeft', code: 'ArrowLeft', keyCode: 37, modifiers: 0 },
    picture,
  );
  assert.deepEqual([left!.type, left!.text], ['rawKeyDown', undefined]);
  const [enter] = inputEvents(
    { type: 'key', action: 'down', key: 'Enter', code: 'Enter', keyCode: 13, modifiers: 0 },
    picture,
  );
  assert.equal(enter!.text, '\r');
});
