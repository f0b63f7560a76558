/**
 * What a live viewer may send: mouse, wheel and keyboard input, nothing else. Every message is
 * checked field by field (known type, known fields only, numbers in range, short strings); one
 * that fails is refused whole, so a viewer can never put anything of its own into a CDP call.
 */

/** A viewer's message is small: the largest valid one is well under this. */
export const MAX_VIEWER_MESSAGE_BYTES = 1024;

/** Where on the picture, as a fraction of its width and height (0–1): the worker scales to the viewport. */
interface Point {
  x: number;
  y: number;
}

export type MouseButton = 'none' | 'left' | 'middle' | 'right';

export interface MouseMessage extends Point {
  type: 'mouse';
  action: 'move' | 'down' | 'up' | 'click';
  button: MouseButton;
  /** Shift 8, Meta 4, Ctrl 2, Alt 1, as CDP counts them. */
  modifiers: number;
}

export interface WheelMessage extends Point {
  type: 'wheel';
  dx: number;
  dy: number;
  modifiers: number;
}

export interface KeyMessage {
  type: 'key';
  action: 'down' | 'up';
  /** KeyboardEvent.key: 'a', 'Enter', 'ArrowLeft'. */
  key: string;
  /** KeyboardEvent.code: 'KeyA', 'Enter'. */
  code: string;
  /** Windows virtual key code (KeyboardEvent.keyCode), which Chromium needs for Enter, Backspace… */
  keyCode: number;
  modifiers: number;
}

export type ViewerMessage = MouseMessage | WheelMessage | KeyMessage;

export class InvalidViewerMessage extends Error {}

const MOUSE_ACTIONS = ['move', 'down', 'up', 'click'] as const;
const BUTTONS = ['none', 'left', 'middle', 'right'] as const;
const KEY_ACTIONS = ['down', 'up'] as const;
/** A wheel turn larger than this many pixels is no scroll a person makes. */
const MAX_WHEEL_DELTA = 10_000;
const MAX_KEY_CHARS = 32;

/** Parses one text message; throws InvalidViewerMessage for anything not exactly as specified. */
export function parseViewerMessage(raw: string): ViewerMessage {
  if (Buffer.byteLength(raw, 'utf8') > MAX_VIEWER_MESSAGE_BYTES) throw new InvalidViewerMessage('too large');
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new InvalidViewerMessage('not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidViewerMessage('not an object');
  const message = value as Record<string, unknown>;
  switch (message.type) {
    case 'mouse':
      onlyFields(message, ['type', 'action', 'x', 'y', 'button', 'modifiers']);
      return {
        type: 'mouse',
        action: oneOf(message.action, MOUSE_ACTIONS, 'action'),
        x: fraction(message.x, 'x'),
        y: fraction(message.y, 'y'),
        button: oneOf(message.button, BUTTONS, 'button'),
        modifiers: integer(message.modifiers, 0, 15, 'modifiers'),
      };
    case 'wheel':
      onlyFields(message, ['type', 'x', 'y', 'dx', 'dy', 'modifiers']);
      return {
        type: 'wheel',
        x: fraction(message.x, 'x'),
        y: fraction(message.y, 'y'),
        dx: bounded(message.dx, MAX_WHEEL_DELTA, 'dx'),
        dy: bounded(message.dy, MAX_WHEEL_DELTA, 'dy'),
        modifiers: integer(message.modifiers, 0, 15, 'modifiers'),
      };
    case 'key':
      onlyFields(message, ['type', 'action', 'key', 'code', 'keyCode', 'modifiers']);
      return {
        type: 'key',
        action: oneOf(message.action, KEY_ACTIONS, 'action'),
        key: keyText(message.key, 'key'),
        code: keyText(message.code, 'code', true),
        keyCode: integer(message.keyCode, 0, 255, 'keyCode'),
        modifiers: integer(message.modifiers, 0, 15, 'modifiers'),
      };
    default:
      throw new InvalidViewerMessage('unknown type');
  }
}

function onlyFields(message: Record<string, unknown>, allowed: readonly string[]): void {
  for (const name of Object.keys(message)) {
    if (!allowed.includes(name)) throw new InvalidViewerMessage(`unknown field ${name}`);
  }
}

function oneOf<T extends string>(value: unknown, options: readonly T[], name: string): T {
  if (typeof value !== 'string' || !(options as readonly string[]).includes(value))
    throw new InvalidViewerMessage(`bad ${name}`);
  return value as T;
}

function fraction(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1)
    throw new InvalidViewerMessage(`bad ${name}`);
  return value;
}

function bounded(value: unknown, limit: number, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value) > limit)
    throw new InvalidViewerMessage(`bad ${name}`);
  return value;
}

function integer(value: unknown, min: number, max: number, name: string): number {
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max)
    throw new InvalidViewerMessage(`bad ${name}`);
  return value as number;
}

/** A key name or code: short, printable, no control characters. */
function keyText(value: unknown, name: string, mayBeEmpty = false): string {
  if (typeof value !== 'string') throw new InvalidViewerMessage(`bad ${name}`);
  const chars = [...value];
  if ((!mayBeEmpty && chars.length === 0) || chars.length > MAX_KEY_CHARS)
    throw new InvalidViewerMessage(`bad ${name}`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new InvalidViewerMessage(`bad ${name}`);
  return value;
}
