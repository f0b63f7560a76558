/* global Scalar */
// Starts Scalar's API reference (loaded just before from /docs/scalar.js) on this gateway's own
// OpenAPI document. Every option below that is not about looks keeps the page from reaching
// anything but this gateway: the page's Content-Security-Policy would block such requests anyway,
// and a blocked request is an error in the browser's console.
Scalar.createApiReference('#reference', {
  url: '/openapi.json',
  // Inter and JetBrains Mono from fonts.scalar.com otherwise; the system's fonts instead.
  withDefaultFonts: false,
  // Usage reports to Scalar.
  telemetry: false,
  // No request proxy: the "test request" client calls this gateway directly (same origin).
  proxyUrl: '',
  // Scalar's hosted AI agent.
  agent: { disabled: true },
  // The toolbar links to Scalar's hosted services.
  showDeveloperTools: 'never',
  documentDownloadType: 'json',
  hideDarkModeToggle: false,
  metaData: { title: 'Switchboard API reference' },
});
