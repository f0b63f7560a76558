import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AllowedHosts } from '@switchboard/address-guard';
import { judgeCommand, parseCommand, type CdpCommand, type Verdict } from './cdp-policy.js';

const allowed = AllowedHosts.parse(['127.0.0.1:8080']);
const judge = (method: string, params?: Record<string, unknown>, sessionId?: string): Verdict =>
  judgeCommand(
    { id: 1, method, ...(params ? { params } : {}), ...(sessionId ? { sessionId } : {}) },
    allowed,
  );
const refused = (verdict: Verdict) => 'refuse' in verdict;
const forwarded = (verdict: Verdict): CdpCommand => {
  assert.ok('forward' in verdict, JSON.stringify(verdict));
  return verdict.forward;
};

test('what a developer does with its own pages is forwarded as sent', () => {
  for (const [method, params] of [
    ['Runtime.evaluate', { expression: '1 + 1' }],
    ['DOM.getDocument', {}],
    ['CSS.enable', {}],
    ['Network.enable', {}],
    ['Page.captureScreenshot', { format: 'png' }],
    ['Input.dispatchMouseEvent', { type: 'mousePressed', x: 1, y: 1 }],
    ['Emulation.setDeviceMetricsOverride', { width: 10, height: 10, deviceScaleFactor: 1, mobile: false }],
    ['Tracing.start', { traceConfig: {} }],
    ['Page.navigate', { url: 'http://127.0.0.1:8080/page' }],
    ['Page.navigate', { url: 'https://example.com/' }],
    ['Target.createTarget', { url: 'about:blank' }],
    ['Target.createBrowserContext', {}],
    ['Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }],
    ['Browser.getVersion', undefined],
  ] as const) {
    const command = forwarded(judge(method, params, 'S1'));
    assert.equal(command.method, method);
    assert.equal(command.sessionId, 'S1', 'flattened sessions keep their id');
  }
});

test('leaving the session or the guard is refused, whichever session the message names', () => {
  for (const [method, params] of [
    ['Target.createBrowserContext', { proxyServer: 'direct://' }],
    ['Target.createBrowserContext', { proxyBypassList: '*' }],
    ['Target.createTarget', { url: 'file:///etc/hostname' }],
    ['Target.createTarget', { url: 'chrome://version' }],
    ['Page.navigate', { url: 'view-source:file:///etc/passwd' }],
    ['Page.navigate', { url: 'devtools://devtools/bundled/inspector.html' }],
    ['Page.navigate', { url: 'chrome-extension://abc/x.html' }],
    ['Page.navigate', { url: 'http://10.0.0.1/' }],
    ['Page.navigate', { url: 42 }],
    ['Network.loadNetworkResource', { url: 'file:///etc/passwd' }],
    ['Fetch.continueRequest', { requestId: 'r', url: 'http://169.254.169.254/' }],
    ['DOM.setFileInputFiles', { files: ['/etc/passwd'] }],
    ['Page.handleFileChooser', { action: 'accept', files: ['/etc/passwd'] }],
    ['Input.dispatchDragEvent', { type: 'drop', x: 0, y: 0, data: { items: [], files: ['/etc/passwd'] } }],
    ['Tracing.start', { perfettoConfig: 'AAAA' }],
    ['Target.exposeDevToolsProtocol', { targetId: 't' }],
    ['Target.setRemoteLocations', { locations: [] }],
    ['Browser.getBrowserCommandLine', {}],
    ['Browser.crash', {}],
    ['SystemInfo.getProcessInfo', {}],
    ['Extensions.loadUnpacked', { path: '/tmp/x' }],
  ] as const) {
    for (const sessionId of [undefined, 'S1']) {
      const verdict = judge(method, params, sessionId);
      assert.ok(refused(verdict), `${method} ${JSON.stringify(params)} via ${sessionId ?? 'browser'}`);
    }
  }
});

test('download behaviour is forwarded as deny, keeping only the context and events', () => {
  for (const method of ['Browser.setDownloadBehavior', 'Page.setDownloadBehavior']) {
    const command = forwarded(
      judge(method, {
        behavior: 'allowAndName',
        downloadPath: '/tmp/x',
        browserContextId: 'C',
        eventsEnabled: true,
      }),
    );
    assert.deepEqual(command.params, { behavior: 'deny', browserContextId: 'C', eventsEnabled: true });
  }
});

test('only well-formed commands are read, and only their four fields are kept', () => {
  assert.deepEqual(parseCommand('{"id":3,"method":"Runtime.enable","extra":"dropped"}'), {
    id: 3,
    method: 'Runtime.enable',
  });
  assert.deepEqual(parseCommand('{"id":4,"method":"DOM.enable","params":{},"sessionId":"S"}'), {
    id: 4,
    method: 'DOM.enable',
    params: {},
    sessionId: 'S',
  });
  for (const bad of ['not json', '[]', '1', '{"method":"X.y"}', '{"id":1.5,"method":"X.y"}', '{"id":1}']) {
    assert.ok('invalid' in parseCommand(bad), bad);
  }
  assert.deepEqual(parseCommand('{"id":7,"method":"X.y","params":[]}'), {
    invalid: 'params must be an object',
    id: 7,
  });
});
