import type { AllowedHosts } from '@switchboard/address-guard';
import { checkNavigationUrl } from '../guard/url-policy.js';

/** One client → browser CDP command, as the relay forwards it (and nothing else). */
export interface CdpCommand {
  id: number;
  method: string;
  params?: Record<string, unknown>;
  sessionId?: string;
}

export type Verdict = { forward: CdpCommand } | { refuse: string };

/** null: forward as sent; a string: refuse for that reason; `{ params }`: forward with these. */
type Rule = (
  params: Record<string, unknown>,
  allowed: AllowedHosts,
) => string | null | { params: Record<string, unknown> };

/**
 * Domains a developer uses on its own pages, allowed whole: inspecting and scripting pages never
 * reaches the worker's files or the network around the address guard. Methods of these domains
 * that do are listed in `rules` and judged there first.
 */
const openDomains = new Set([
  'Accessibility',
  'Animation',
  'Audits',
  'Autofill',
  'BackgroundService',
  'CacheStorage',
  'Console',
  'CSS',
  'Debugger',
  'DeviceOrientation',
  'DOM',
  'DOMDebugger',
  'DOMSnapshot',
  'DOMStorage',
  'Emulation',
  'EventBreakpoints',
  'Fetch',
  'HeadlessExperimental',
  'HeapProfiler',
  'IndexedDB',
  'Input',
  'Inspector',
  'IO',
  'LayerTree',
  'Log',
  'Media',
  'Memory',
  'Network',
  'Overlay',
  'Page',
  'Performance',
  'PerformanceTimeline',
  'Preload',
  'Profiler',
  'Runtime',
  'Schema',
  'Security',
  'ServiceWorker',
  'Storage',
  'Tracing',
  'WebAudio',
  'WebAuthn',
]);

const refuse = (reason: string) => reason;
const pass: Rule = () => null;

/** `url` must be a page the address guard may open (or a blank page). */
function urlRule(field: string, { blankAllowed }: { blankAllowed: boolean }): Rule {
  return (params, allowed) => {
    const url = params[field];
    if (url === undefined && !blankAllowed) return refuse(`${field} is required`);
    if (url === undefined || (blankAllowed && (url === '' || url === 'about:blank'))) return null;
    if (typeof url !== 'string') return refuse(`${field} must be a string`);
    try {
      checkNavigationUrl(url, allowed);
      return null;
    } catch (error) {
      return refuse(`${field} is not allowed (${(error as Error).message})`);
    }
  };
}

/** Downloads never land on the worker: any behaviour asked for is forwarded as `deny`. */
const denyDownloads: Rule = (params) => {
  const kept: Record<string, unknown> = { behavior: 'deny' };
  if (params.browserContextId !== undefined) kept.browserContextId = params.browserContextId;
  if (params.eventsEnabled !== undefined) kept.eventsEnabled = params.eventsEnabled;
  return { params: kept };
};

const rules: Record<string, Rule> = {
  // Pages, and what they load, stay inside the guard.
  'Page.navigate': urlRule('url', { blankAllowed: true }),
  'Target.createTarget': urlRule('url', { blankAllowed: true }),
  'Network.loadNetworkResource': urlRule('url', { blankAllowed: false }),
  'Fetch.continueRequest': urlRule('url', { blankAllowed: false }),
  'Network.continueInterceptedRequest': urlRule('url', { blankAllowed: false }),
  // A context with its own proxy would route around the guard's proxy.
  'Target.createBrowserContext': (params) =>
    params.proxyServer !== undefined || params.proxyBypassList !== undefined
      ? refuse('browser contexts may not set their own proxy')
      : params.originsWithUniversalNetworkAccess !== undefined
        ? refuse('originsWithUniversalNetworkAccess is not allowed')
        : null,
  'Browser.setDownloadBehavior': denyDownloads,
  'Page.setDownloadBehavior': denyDownloads,
  // Local file paths on the worker: uploads and drops would read the worker's files.
  'DOM.setFileInputFiles': () => refuse('files on the worker may not be read'),
  'Page.handleFileChooser': () => refuse('files on the worker may not be read'),
  'Input.dispatchDragEvent': (params) => {
    const files = (params.data as { files?: unknown } | undefined)?.files;
    return Array.isArray(files) && files.length > 0 ? refuse('files on the worker may not be read') : null;
  },
  // A Perfetto config may name an output file on the worker.
  'Tracing.start': (params) =>
    params.perfettoConfig !== undefined ? refuse('perfettoConfig is not allowed; use traceConfig') : null,
  // Tabs and targets of this session; nothing that hands out the browser's own protocol.
  'Target.setAutoAttach': pass,
  'Target.setDiscoverTargets': pass,
  'Target.autoAttachRelated': pass,
  'Target.getTargets': pass,
  'Target.getTargetInfo': pass,
  'Target.attachToTarget': pass,
  'Target.attachToBrowserTarget': pass,
  'Target.detachFromTarget': pass,
  'Target.activateTarget': pass,
  'Target.closeTarget': pass,
  'Target.disposeBrowserContext': pass,
  'Target.getBrowserContexts': pass,
  'Browser.getVersion': pass,
  'Browser.getWindowForTarget': pass,
  'Browser.getWindowBounds': pass,
  'Browser.setWindowBounds': pass,
  'Browser.setContentsSize': pass,
  'Browser.grantPermissions': pass,
  'Browser.resetPermissions': pass,
  'Browser.setPermission': pass,
  'Browser.getHistograms': pass,
  'Browser.getHistogram': pass,
  'Browser.cancelDownload': pass,
  // The session's own browser; the worker notices the exit and ends the session.
  'Browser.close': pass,
};

/**
 * The relay's policy (docs/api.md, DevTools): what a DevTools client may ask of its session's
 * browser. An allowlist — a domain or method not named here is refused — with argument checks
 * where a method is allowed but some of its arguments are not. Applies alike to flattened
 * session messages (`sessionId`), so attaching to a target gains nothing.
 */
export function judgeCommand(command: CdpCommand, allowed: AllowedHosts): Verdict {
  const params = command.params ?? {};
  const rule = rules[command.method];
  const domain = command.method.split('.')[0]!;
  if (rule === undefined && !openDomains.has(domain)) {
    return { refuse: `${command.method} is not available over the session's DevTools` };
  }
  const outcome = (rule ?? pass)(params, allowed);
  if (outcome === null) return { forward: command };
  if (typeof outcome === 'string') return { refuse: `${command.method}: ${outcome}` };
  return { forward: { ...command, params: outcome.params } };
}

/**
 * Reads one client frame as a CDP command: a JSON object with an integer `id`, a `method` string,
 * optional object `params` and optional string `sessionId`. Anything else is refused here, and
 * only these four fields are forwarded (re-serialised), so Chromium parses exactly what was judged.
 */
export function parseCommand(text: string): CdpCommand | { invalid: string; id?: number } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { invalid: 'the message is not valid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { invalid: 'the message is not a JSON object' };
  }
  const { id, method, params, sessionId } = value as Record<string, unknown>;
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) return { invalid: 'id must be an integer' };
  if (typeof method !== 'string' || method === '') return { invalid: 'method must be a string', id };
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) {
    return { invalid: 'params must be an object', id };
  }
  if (sessionId !== undefined && typeof sessionId !== 'string') {
    return { invalid: 'sessionId must be a string', id };
  }
  const command: CdpCommand = { id, method };
  if (params !== undefined) command.params = params as Record<string, unknown>;
  if (sessionId !== undefined) command.sessionId = sessionId;
  return command;
}
