// What must hold on this host before any tenant gets a Chromium. Each check fails closed: without
// the managed policy, Chromium's own layer of the DevTools policy is gone; without a working
// sandbox (unless the operator opted out), a renderer exploit owns the worker.
import type { Logger } from '@switchboard/telemetry';
import type { BrowserConfig } from '../config.js';
import type { ChromiumIsolation } from './chromium-user.js';
import { checkManagedPolicy } from './managed-policy.js';
import { prepareChromiumIsolation } from './sandbox-check.js';
import { removeStaleProfiles } from './stale-profiles.js';

/** Checks the policy, clears profiles dead workers left, and proves the sandbox; throws if not. */
export async function prepareChromiumHost(config: BrowserConfig, logger: Logger): Promise<ChromiumIsolation> {
  await checkManagedPolicy(config.chromiumPolicyDir);
  const stale = await removeStaleProfiles(config.profileRoot);
  if (stale > 0) logger.info({ removed: stale }, 'removed profile directories of dead workers');
  return prepareChromiumIsolation({
    chromiumPath: config.chromiumPath,
    profileRoot: config.profileRoot,
    userName: config.chromiumUser,
    sandbox: config.chromiumSandbox,
    logger,
  });
}
