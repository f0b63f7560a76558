import { freePort } from './ports.js';

/**
 * Listen addresses for worker replicas, one per process as a pod gets its own IP: 127.0.0.2,
 * 127.0.0.3, … Linux routes all of 127.0.0.0/8 to the loopback interface, so every replica can
 * use the same port, as pods behind a headless Service do. An address is never handed out twice
 * in a run: a gateway that still holds a removed replica's address must reach nothing (and drop
 * it), not a newer process that happens to reuse it.
 */
export class LoopbackAddresses {
  private next = 2;

  take(): string {
    for (;;) {
      const n = this.next++;
      if (n >= 1 << 16) throw new Error('no loopback addresses left for replicas');
      const [high, low] = [n >> 8, n & 0xff];
      // .0 and .255 are legal on loopback but read like network and broadcast addresses.
      if (low !== 0 && low !== 0xff) return `127.0.${high}.${low}`;
    }
  }
}

/**
 * Fails with a hint where only 127.0.0.1 is usable (macOS configures just that one on lo0), before
 * any process is started, rather than with each replica's EADDRNOTAVAIL.
 */
export async function checkLoopbackAliases(): Promise<void> {
  try {
    await freePort('127.0.0.2');
  } catch (error) {
    throw new Error(
      `SWITCHBOARD_REPLICAS runs each replica on its own loopback address, but 127.0.0.2 cannot be bound here ` +
        `(${(error as Error).message}); on macOS add aliases first: sudo ifconfig lo0 alias 127.0.0.2 up (and .3, .4, …)`,
    );
  }
}
