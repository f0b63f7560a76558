// The webhook sender process: config from the environment, the sender, closed on SIGTERM/SIGINT.
import { startTracing } from '@switchboard/telemetry';

// Tracing starts before the service is imported: its instrumentations patch the libraries (pg,
// http) as they load, which a static import would have loaded already.
// Deliveries go to tenants' servers: they carry no traceparent of the cluster's (the
// `webhooks.deliver` span continues the event's trace here instead).
const tracing = await startTracing({ service: 'webhooks', traceOutgoingHttp: false });
const [{ ConfigError }, { runWorkerProcess }, { loadWebhooksConfig }, { startWebhookSender }] =
  await Promise.all([
    import('@switchboard/config'),
    import('@switchboard/grpc'),
    import('./config.js'),
    import('./sender.js'),
  ]);

runWorkerProcess({
  service: 'webhooks',
  loadConfig: loadWebhooksConfig,
  start: startWebhookSender,
  selfExplainingErrors: [ConfigError],
  tracing,
});
