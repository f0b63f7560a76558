import { dnsServerResolver, systemResolver } from '@switchboard/address-guard';
import { SwitchboardError } from '@switchboard/errors';
import type { Logger } from '@switchboard/telemetry';
import { SecretBox, WebhookStore } from '@switchboard/webhooks';
import type { GatewayConfig } from '../config.js';
import type { GatewayDeps } from '../server.js';
import { WebhookTargets } from './target-check.js';

/** What the `/webhooks` calls use: the shared store and the registration-time URL check. */
export interface GatewayWebhooks {
  store: WebhookStore;
  targets: WebhookTargets;
}

/**
 * Opens the webhook store once per gateway (its schema is created under a lock, as the usage
 * store's is). Without WEBHOOK_SECRETS_KEY nothing is opened: the secrets could not be sealed.
 */
export async function openGatewayWebhooks(
  config: NonNullable<GatewayConfig['webhooks']>,
  logger: Logger,
): Promise<GatewayWebhooks> {
  const store = await WebhookStore.open({
    connectionString: config.databaseUrl,
    secretBox: new SecretBox(config.secretsKey),
    logger,
  });
  const resolver = config.dnsServers.length > 0 ? dnsServerResolver(config.dnsServers) : systemResolver();
  return { store, targets: new WebhookTargets(config.allowedHosts, resolver) };
}

/** The webhooks of this gateway; `503 unavailable` when the operator has not turned them on. */
export function webhooksOf(deps: GatewayDeps): GatewayWebhooks {
  if (deps.webhooks === undefined) {
    throw new SwitchboardError('unavailable', {
      message: 'Webhooks are not enabled on this cluster (WEBHOOK_SECRETS_KEY is not set).',
    });
  }
  return deps.webhooks;
}
