/**
 * Flags for a headless Chromium on a closed network (docs/browser-sessions.md): no
 * background networking, component updates, sync or first-run, whose connection attempts would
 * otherwise be refused at every start; all traffic through the worker's address guard proxy,
 * loopback included (`<-loopback>` undoes Chromium's implicit bypass of local addresses). What
 * flags cannot enforce (no file:/chrome: pages, no downloads, no UDP around the proxy) comes from
 * the managed policy (policy/switchboard.json, checked at start-up by managed-policy.ts).
 */
export function chromiumFlags(options: {
  profileDir: string;
  proxyPort: number;
  sandbox: boolean;
  /** V8's old-space limit for every JavaScript heap in a renderer; absent: Chromium's own. */
  rendererHeapMb?: number;
}): string[] {
  return [
    '--headless',
    // A page (or worker) whose JavaScript heap passes it crashes its renderer, and with it its
    // session (session-service.ts), before the worker's memory poll would have seen it.
    ...(options.rendererHeapMb === undefined
      ? []
      : [`--js-flags=--max-old-space-size=${options.rendererHeapMb}`]),
    // Only when the operator opted out (BROWSER_CHROMIUM_SANDBOX=false, warned at every start):
    // otherwise renderers run under seccomp-bpf in namespaces of their own (sandbox-check.ts).
    ...(options.sandbox ? [] : ['--no-sandbox']),
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--disable-quic',
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-default-apps',
    '--disable-extensions',
    '--disable-breakpad',
    '--disable-domain-reliability',
    '--disable-client-side-phishing-detection',
    '--disable-component-extensions-with-background-pages',
    '--disable-field-trial-config',
    '--disable-search-engine-choice-screen',
    '--no-pings',
    // Features that phone home at start-up (sign-in, translation, hints, media routing).
    '--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,' +
      'AutofillServerCommunication,CertificateTransparencyComponentUpdater,PrivacySandboxSettings4,' +
      'InterestFeedContentSuggestions,ChromeWhatsNewUI,AccountConsistency',
    '--metrics-recording-only',
    '--mute-audio',
    '--hide-scrollbars',
    '--password-store=basic',
    '--use-mock-keychain',
    `--user-data-dir=${options.profileDir}`,
    `--proxy-server=http://127.0.0.1:${options.proxyPort}`,
    '--proxy-bypass-list=<-loopback>',
    // The proxy forced for every context, not only the default one: a context created over CDP
    // with its own proxy (`direct://`, or another server) overrides --proxy-server, but the host
    // resolver is the browser's, so there every connection but the one to the guard's proxy fails
    // to resolve (IP literals included; checked with Chromium 156).
    `--host-resolver-rules=MAP 127.0.0.1:${options.proxyPort} 127.0.0.1:${options.proxyPort}, MAP * ~NOTFOUND`,
    // The DevTools socket the relay and Playwright connect to: loopback only, a free port.
    '--remote-debugging-address=127.0.0.1',
    '--remote-debugging-port=0',
    // And a pipe on fds 3/4 that nobody speaks on: Chromium exits when it closes, so a worker
    // that dies (even by SIGKILL) takes its browsers with it.
    '--remote-debugging-pipe',
    'about:blank',
  ];
}
