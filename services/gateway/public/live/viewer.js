/* global document, location, performance, WebSocket */
// The live-view page: frames from the session's tab drawn into an <img>, and in interact mode the
// viewer's mouse, wheel and keys sent back as small JSON messages. Nothing else: no framework,
// nothing from another origin (the page's Content-Security-Policy allows neither).

const screen = document.getElementById('screen');
const statusLine = document.getElementById('status');
const modeLabel = document.getElementById('mode');

/** Why the socket closed, by the codes the gateway and the worker close it with. */
const CLOSE_REASONS = {
  4001: ['revoked', 'The live-view link was revoked.'],
  4002: ['expired', 'The live-view link has expired.'],
  4003: ['ended', 'The browser session has ended.'],
  1008: ['refused', 'The live view refused a message and disconnected.'],
};
/** Mouse moves are sent at most this often. */
const MOVE_EVERY_MS = 40;

let socket;
let mode = 'view';
let frames = 0;
let shownUrl;
/** The frame being loaded into the <img>, and the newest one that came meanwhile. */
let loadingUrl;
let nextFrame;
let finished = false;
/** When the socket was opened, to say how long the first picture took (data-first-frame-ms). */
let connectedAt = 0;

function setState(state, text) {
  document.body.dataset.state = state;
  statusLine.textContent = text;
  statusLine.classList.toggle('ended', state !== 'live' && state !== 'connecting');
}

function finish(state, text) {
  if (finished) return;
  finished = true;
  setState(state, text);
}

/**
 * Draws a frame once the one loading has loaded: setting `src` while a picture still loads aborts
 * it, and frames that come faster than pictures load would then never show one. Frames that come
 * meanwhile replace each other; only the newest is drawn.
 */
function showFrame(blob) {
  if (loadingUrl) {
    nextFrame = blob;
    return;
  }
  loadingUrl = URL.createObjectURL(blob);
  screen.src = loadingUrl;
}

/** The frame loading has loaded (or failed to decode, and is skipped): the next one may load. */
function frameSettled(loaded) {
  if (!loadingUrl) return;
  if (loaded) {
    if (shownUrl) URL.revokeObjectURL(shownUrl);
    shownUrl = loadingUrl;
    frames += 1;
    document.body.dataset.frames = String(frames);
    if (frames === 1)
      document.body.dataset.firstFrameMs = String(Math.round(performance.now() - connectedAt));
  } else {
    URL.revokeObjectURL(loadingUrl);
  }
  loadingUrl = undefined;
  if (nextFrame) {
    const blob = nextFrame;
    nextFrame = undefined;
    showFrame(blob);
  }
}

screen.addEventListener('load', () => frameSettled(true));
screen.addEventListener('error', () => frameSettled(false));

function connect() {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  connectedAt = performance.now();
  socket = new WebSocket(`${scheme}//${location.host}${location.pathname}/stream`);
  socket.binaryType = 'blob';
  setState('connecting', 'Connecting…');
  socket.addEventListener('message', (event) => {
    if (typeof event.data !== 'string') {
      if (!finished) setState('live', 'Live');
      showFrame(event.data);
      return;
    }
    let message;
    try {
      message = JSON.parse(event.data);
    } catch {
      return;
    }
    if (message.type === 'hello') {
      mode = message.mode === 'interact' ? 'interact' : 'view';
      modeLabel.textContent = mode === 'interact' ? 'interactive' : 'view only';
      document.body.classList.toggle('interact', mode === 'interact');
      setState('live', 'Live');
    } else if (message.type === 'ended') {
      finish('ended', CLOSE_REASONS[4003][1]);
    }
  });
  socket.addEventListener('close', (event) => {
    const known = CLOSE_REASONS[event.code];
    if (known) finish(known[0], known[1]);
    else finish('disconnected', 'Disconnected: the link may have been revoked, or the session ended.');
  });
}

function send(message) {
  if (mode !== 'interact' || !socket || socket.readyState !== WebSocket.OPEN) return;
  socket.send(JSON.stringify(message));
}

/** Where on the picture, as fractions of its width and height. */
function pointOf(event) {
  const box = screen.getBoundingClientRect();
  const clamp = (v) => Math.min(1, Math.max(0, v));
  return {
    x: clamp((event.clientX - box.left) / (box.width || 1)),
    y: clamp((event.clientY - box.top) / (box.height || 1)),
  };
}

function modifiersOf(event) {
  return (
    (event.altKey ? 1 : 0) | (event.ctrlKey ? 2 : 0) | (event.metaKey ? 4 : 0) | (event.shiftKey ? 8 : 0)
  );
}

const BUTTONS = ['left', 'middle', 'right'];

function mouse(action, event, button) {
  send({ type: 'mouse', action, ...pointOf(event), button, modifiers: modifiersOf(event) });
}

let lastMove = 0;
screen.addEventListener('mousemove', (event) => {
  const now = Date.now();
  if (now - lastMove < MOVE_EVERY_MS) return;
  lastMove = now;
  mouse('move', event, 'none');
});
screen.addEventListener('mousedown', (event) => {
  if (mode !== 'interact') return;
  event.preventDefault();
  screen.focus();
  mouse('down', event, BUTTONS[event.button] ?? 'left');
});
screen.addEventListener('mouseup', (event) => {
  if (mode !== 'interact') return;
  event.preventDefault();
  mouse('up', event, BUTTONS[event.button] ?? 'left');
});
screen.addEventListener('contextmenu', (event) => {
  if (mode === 'interact') event.preventDefault();
});
screen.addEventListener(
  'wheel',
  (event) => {
    if (mode !== 'interact') return;
    event.preventDefault();
    const clampDelta = (v) => Math.max(-10000, Math.min(10000, v));
    send({
      type: 'wheel',
      ...pointOf(event),
      dx: clampDelta(event.deltaX),
      dy: clampDelta(event.deltaY),
      modifiers: modifiersOf(event),
    });
  },
  { passive: false },
);

function key(action, event) {
  if (mode !== 'interact' || event.isComposing) return;
  if ([...event.key].length > 32 || [...event.code].length > 32) return;
  event.preventDefault();
  send({
    type: 'key',
    action,
    key: event.key,
    code: event.code,
    keyCode: event.keyCode & 0xff,
    modifiers: modifiersOf(event),
  });
}
document.addEventListener('keydown', (event) => key('down', event));
document.addEventListener('keyup', (event) => key('up', event));

connect();
