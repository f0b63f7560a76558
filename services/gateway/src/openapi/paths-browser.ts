/** API.md §6: browser sessions, each its own Chromium process. */
import {
  errorResponses,
  json,
  jsonBody,
  jsonBodyErrors,
  keyErrors,
  parameterRef,
  ref,
  success,
  workerErrors,
  type ErrorCode,
  type Operation,
  type Paths,
  type Schemas,
} from './components.js';

const viewportSide = (fallback: number) => ({
  type: 'integer',
  minimum: 100,
  maximum: 3840,
  default: fallback,
});
const sessionIdSchema = { type: 'string', format: 'uuid' };

export const browserSchemas: Schemas = {
  BrowserSessionStatus: {
    type: 'string',
    enum: ['active', 'closed', 'expired'],
    description:
      '`active` → `closed` (by close) or `expired` (idle for `BROWSER_IDLE_TIMEOUT_MS`, default 10 minutes).',
  },
  CreateSessionRequest: {
    type: 'object',
    properties: { viewport_width: viewportSide(1280), viewport_height: viewportSide(720) },
  },
  SessionCreated: {
    type: 'object',
    required: ['session_id', 'status', 'created_at', 'devtools_url'],
    properties: {
      session_id: sessionIdSchema,
      status: { const: 'active' },
      created_at: { type: 'string', format: 'date-time', description: 'ISO 8601, UTC (`Z`).' },
      devtools_url: {
        type: 'string',
        description: '`ws://…/api/browser/session/<id>/devtools`: the Chrome DevTools Protocol endpoint.',
      },
    },
  },
  NavigateRequest: {
    type: 'object',
    required: ['url'],
    properties: {
      url: {
        type: 'string',
        minLength: 1,
        description: 'An http(s) URL whose host is not a private, loopback or cluster address.',
      },
    },
  },
  NavigateResult: {
    type: 'object',
    required: ['session_id', 'url', 'title', 'http_status'],
    properties: {
      session_id: sessionIdSchema,
      url: { type: 'string', description: 'The final URL after redirects.' },
      title: { type: 'string' },
      http_status: { type: 'integer' },
    },
  },
  InputRequest: {
    type: 'object',
    required: ['selector', 'text'],
    properties: {
      selector: { type: 'string', minLength: 1, description: 'A CSS selector; must match within 5 s.' },
      text: { type: 'string', description: 'Text typed into the element.' },
    },
  },
  InputResult: {
    type: 'object',
    required: ['session_id', 'selector'],
    properties: { session_id: sessionIdSchema, selector: { type: 'string' } },
  },
  SubmitRequest: {
    type: 'object',
    required: ['selector'],
    properties: {
      selector: {
        type: 'string',
        minLength: 1,
        description: 'The form (or an element inside it) to submit; must match within 5 s.',
      },
    },
  },
  SubmitResult: {
    type: 'object',
    required: ['session_id', 'url'],
    properties: {
      session_id: sessionIdSchema,
      url: { type: 'string', description: 'The URL after any navigation settles.' },
    },
  },
  CaptureResult: {
    type: 'object',
    required: ['screenshot', 'url'],
    properties: {
      screenshot: {
        type: 'string',
        description: '`<session id>/capture-<unix ms>.png`; two captures never share a name.',
      },
      url: { type: 'string', description: '`/api/browser/screenshots/<session id>/capture-<unix ms>.png`.' },
    },
  },
  SessionDetails: {
    type: 'object',
    required: ['session_id', 'status', 'created_at', 'current_url', 'history', 'screenshots'],
    properties: {
      session_id: sessionIdSchema,
      status: ref('BrowserSessionStatus'),
      created_at: { type: 'string', format: 'date-time' },
      current_url: {
        type: ['string', 'null'],
        description: 'The last URL the main frame committed to; null before the first navigation.',
      },
      history: {
        type: 'array',
        items: { type: 'string' },
        description:
          'Every URL the main frame committed to, in order (redirect targets, links followed by submit); starts empty.',
      },
      screenshots: {
        type: 'array',
        items: { type: 'string' },
        description: 'File names, `capture-<unix ms>.png`.',
      },
    },
  },
  SessionClosed: {
    type: 'object',
    required: ['session_id', 'status'],
    properties: { session_id: sessionIdSchema, status: { const: 'closed' } },
  },
};

const tag = ['Browser sessions'];
const base = '/api/browser/session';
/** Every call on an existing session. */
const onSession: readonly ErrorCode[] = [...keyErrors, 'session_not_found', ...workerErrors];
/** Every action (not `details`) on a session that may have ended. */
const action: readonly ErrorCode[] = [...onSession, 'session_closed', 'session_expired'];

function sessionOperation(operation: Omit<Operation, 'tags'>): Operation {
  return {
    tags: tag,
    ...operation,
    parameters: [parameterRef('SessionId'), ...(operation.parameters ?? [])],
  };
}

export const browserPaths: Paths = {
  [`${base}/create`]: {
    post: {
      operationId: 'createBrowserSession',
      tags: tag,
      summary: 'Create a browser session',
      description:
        "Takes a Chromium process from the pre-launched pool. The session and its screenshots belong to the key id that created it. Too many sessions for the key's tier → `429 session_limit`; no browser capacity anywhere → `503 no_capacity`.",
      requestBody: { ...jsonBody('CreateSessionRequest'), required: false },
      responses: {
        201: success('apiKey', 'The session.', json(ref('SessionCreated'))),
        ...errorResponses('apiKey', [
          ...keyErrors,
          ...jsonBodyErrors,
          'session_limit',
          'no_capacity',
          ...workerErrors,
        ]),
      },
    },
  },
  [`${base}/{id}/navigate`]: {
    post: sessionOperation({
      operationId: 'navigateBrowserSession',
      summary: 'Open a URL',
      description:
        'Answers after the `load` event. Non-http(s) URLs and hosts that resolve to loopback, private, link-local, CGNAT, metadata, multicast or cluster-internal addresses (at connect time, after every redirect, for sub-resources too) → `400 url_not_allowed`. DNS failure, refused connection or a page that never loads → `502 navigation_failed`.',
      requestBody: jsonBody('NavigateRequest'),
      responses: {
        200: success('apiKey', 'The page loaded.', json(ref('NavigateResult'))),
        ...errorResponses('apiKey', [...action, ...jsonBodyErrors, 'url_not_allowed', 'navigation_failed']),
      },
    }),
  },
  [`${base}/{id}/input`]: {
    post: sessionOperation({
      operationId: 'inputBrowserSession',
      summary: 'Type text into an element',
      requestBody: jsonBody('InputRequest'),
      responses: {
        200: success('apiKey', 'The text was typed.', json(ref('InputResult'))),
        ...errorResponses('apiKey', [...action, ...jsonBodyErrors, 'element_not_found']),
      },
    }),
  },
  [`${base}/{id}/submit`]: {
    post: sessionOperation({
      operationId: 'submitBrowserSession',
      summary: 'Submit a form',
      requestBody: jsonBody('SubmitRequest'),
      responses: {
        200: success(
          'apiKey',
          'The form was submitted and any navigation settled.',
          json(ref('SubmitResult')),
        ),
        ...errorResponses('apiKey', [
          ...action,
          ...jsonBodyErrors,
          'element_not_found',
          'url_not_allowed',
          'navigation_failed',
        ]),
      },
    }),
  },
  [`${base}/{id}/capture`]: {
    post: sessionOperation({
      operationId: 'captureBrowserSession',
      summary: 'Take a screenshot',
      description: 'No body. Screenshots outlive the session (retention is configuration, default 7 days).',
      responses: {
        200: success('apiKey', 'The screenshot was stored.', json(ref('CaptureResult'))),
        ...errorResponses('apiKey', action),
      },
    }),
  },
  [`${base}/{id}/details`]: {
    get: sessionOperation({
      operationId: 'getBrowserSession',
      summary: 'Describe a session',
      description: 'A closed or expired session still answers, with that status, for an hour.',
      responses: {
        200: success('apiKey', 'The session.', json(ref('SessionDetails'))),
        ...errorResponses('apiKey', onSession),
      },
    }),
  },
  [`${base}/{id}/close`]: {
    post: sessionOperation({
      operationId: 'closeBrowserSession',
      summary: 'Close a session',
      description: 'No body. Closing a closed session again is also `200`.',
      responses: {
        200: success(
          'apiKey',
          'The session is closed; its browser process is gone.',
          json(ref('SessionClosed')),
        ),
        ...errorResponses('apiKey', onSession),
      },
    }),
  },
  [`${base}/{id}/devtools`]: {
    get: sessionOperation({
      operationId: 'browserSessionDevtools',
      summary: 'Chrome DevTools Protocol (WebSocket)',
      description:
        "A WebSocket upgrade to the session browser's DevTools endpoint, proxied. Send the API key in the `Authorization` header: Playwright `chromium.connectOverCDP(devtools_url, {headers})`, Puppeteer `puppeteer.connect({browserWSEndpoint: devtools_url, headers})`. DevTools traffic counts as session activity.",
      parameters: [
        { name: 'Connection', in: 'header', required: true, schema: { const: 'Upgrade' } },
        { name: 'Upgrade', in: 'header', required: true, schema: { const: 'websocket' } },
        { name: 'Sec-WebSocket-Key', in: 'header', required: true, schema: { type: 'string' } },
        { name: 'Sec-WebSocket-Version', in: 'header', required: true, schema: { const: '13' } },
      ],
      responses: {
        101: {
          description:
            'Switching Protocols: the connection now speaks the Chrome DevTools Protocol (JSON messages over WebSocket).',
          headers: {
            Upgrade: { description: '`websocket`', schema: { const: 'websocket' } },
            Connection: { description: '`Upgrade`', schema: { const: 'Upgrade' } },
            'Sec-WebSocket-Accept': { description: 'RFC 6455 accept value.', schema: { type: 'string' } },
          },
        },
        ...errorResponses('apiKey', action),
      },
    }),
  },
  '/api/browser/screenshots/{session_id}/{filename}': {
    get: {
      operationId: 'getBrowserScreenshot',
      tags: tag,
      summary: 'Download a screenshot',
      description: 'To the key that owns the session, also after the session ended.',
      parameters: [
        { name: 'session_id', in: 'path', required: true, schema: sessionIdSchema },
        {
          name: 'filename',
          in: 'path',
          required: true,
          schema: { type: 'string', pattern: '^capture-[0-9]+\\.png$' },
        },
      ],
      responses: {
        200: success('apiKey', 'The PNG.', {
          'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } },
        }),
        ...errorResponses('apiKey', [...keyErrors, 'session_not_found', 'not_found', ...workerErrors]),
      },
    },
  },
};
