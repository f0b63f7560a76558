/** How often a process is started again when a port chosen for it was taken meanwhile. */
const START_ATTEMPTS = 3;

/**
 * Runs `start` again (with fresh ports, which `start` picks itself) when the process it launched
 * died on EADDRINUSE: a port freePort() found free can be taken by anything on the machine
 * before the child binds it, and a test should not fail for that.
 */
export async function retryOnPortClash<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (attempt >= START_ATTEMPTS || !String((error as Error).message).includes('EADDRINUSE')) throw error;
    }
  }
}
