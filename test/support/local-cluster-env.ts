/**
 * The environment a test gives the local cluster (`startCluster`, or the runner `npm start` runs):
 * its own state folder and gateway port, only warnings logged, nothing from the shell but PATH.
 */
export function localClusterEnv(
  stateDir: string,
  gatewayPort: number,
  more: Record<string, string> = {},
): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    SWITCHBOARD_STATE_DIR: stateDir,
    GATEWAY_PORT: String(gatewayPort),
    LOG_LEVEL: 'warn',
    ...more,
  };
}
