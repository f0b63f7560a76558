import { startDnsServer, type DnsServer } from './dns-server.js';
import { checkLoopbackAliases, LoopbackAddresses } from './loopback.js';
import { freePort } from './ports.js';
import type { ManagedProcess } from './process.js';
import { ReplicaSet, type Replica } from './replica-set.js';
import { replicaDnsName } from './replicas.js';

export interface FleetOptions {
  /** The workers to run, in start order. */
  workers: readonly string[];
  /** Processes per worker (SWITCHBOARD_REPLICAS); undefined: the plain mode, one each on 127.0.0.1. */
  counts: ReadonlyMap<string, number> | undefined;
  /** A worker's environment besides its listeners (shared settings and its broker user). */
  envOf: (worker: string) => NodeJS.ProcessEnv;
  spawn: (worker: string, name: string, env: NodeJS.ProcessEnv) => ManagedProcess;
  /** Processes the fleet stops on purpose are added here, so their exit is not taken for a crash. */
  leaving: WeakSet<ManagedProcess>;
  readyTimeoutMs: number;
}

/**
 * Every worker's processes, and where the gateway finds them. In the plain mode that is one
 * process per worker on 127.0.0.1 and `<NAME>_ADDR=127.0.0.1:<port>`, as the runner always did.
 * With replicas it is what Kubernetes gives a headless Service: each process on its own loopback
 * address and the same port, one DNS name per worker (`llm.switchboard.local`) answering with all
 * serving replicas, served by a DNS server of the runner's own that the gateway is pointed at.
 */
export class WorkerFleet {
  private constructor(
    private readonly sets: Map<string, ReplicaSet>,
    /** What the gateway's environment needs to reach the workers. */
    readonly gatewayEnv: NodeJS.ProcessEnv,
    private readonly dns: DnsServer | undefined,
  ) {}

  static async start(options: FleetOptions): Promise<WorkerFleet> {
    const { counts } = options;
    const sets = new Map<string, ReplicaSet>();
    const gatewayEnv: NodeJS.ProcessEnv = {};
    let dns: DnsServer | undefined;
    let hosts: LoopbackAddresses | undefined;
    if (counts !== undefined) {
      await checkLoopbackAliases();
      dns = await startDnsServer({});
      hosts = new LoopbackAddresses();
      gatewayEnv.WORKER_DNS_SERVER = dns.address;
    }
    for (const worker of options.workers) {
      const port = await freePort();
      const name = replicaDnsName(worker);
      const envName = `${worker.toUpperCase()}_ADDR`;
      if (dns !== undefined && hosts !== undefined) {
        const server = dns;
        const pool = hosts;
        // The name exists from the start (NODATA, not NXDOMAIN) while no replica serves yet.
        server.setRecords(name, []);
        gatewayEnv[envName] = `${name}:${port}`;
        sets.set(
          worker,
          new ReplicaSet({
            ...setOptions(options, worker, port),
            nextHost: () => pool.take(),
            nameOf: (ordinal) => `${worker}-${ordinal}`,
            onHostsChange: (addresses) => server.setRecords(name, addresses),
          }),
        );
      } else {
        gatewayEnv[envName] = `127.0.0.1:${port}`;
        sets.set(
          worker,
          new ReplicaSet({
            ...setOptions(options, worker, port),
            nextHost: () => '127.0.0.1',
            nameOf: () => worker,
          }),
        );
      }
    }
    const fleet = new WorkerFleet(sets, gatewayEnv, dns);
    // All at once, as before: model loading dominates start-up. Every start is awaited, failed or
    // not, so none is still spawning when the caller stops everything after a failure.
    const starts = [...sets].flatMap(([worker, set]) =>
      Array.from({ length: counts?.get(worker) ?? 1 }, () => set.add()),
    );
    const failed = (await Promise.allSettled(starts)).find((result) => result.status === 'rejected');
    if (failed !== undefined) {
      await fleet.close();
      throw failed.reason;
    }
    return fleet;
  }

  /** The DNS server's `127.0.0.1:<port>` with replicas; undefined in the plain mode. */
  get dnsServer(): string | undefined {
    return this.dns?.address;
  }

  replicas(worker: string): Replica[] {
    return this.set(worker).replicas;
  }

  /** Starts one more process of `worker`; it joins the worker's DNS name once it serves. */
  async add(worker: string): Promise<Replica> {
    const set = this.set(worker);
    if (this.dns === undefined) {
      throw new Error(
        `the runner starts one process per worker unless SWITCHBOARD_REPLICAS is set (e.g. ${worker}=1); only then can replicas be added`,
      );
    }
    return set.add();
  }

  /** Takes a replica (the newest unless named) out of the DNS name, then stops it. */
  async remove(worker: string, name?: string): Promise<Replica> {
    return this.set(worker).remove(name);
  }

  /** Whether a replica of this name runs here (or should: it may be down, waiting to restart). */
  has(name: string): boolean {
    return this.owner(name) !== undefined;
  }

  /** The replica's process exited on its own: out of its worker's DNS name until it serves again. */
  down(name: string): void {
    this.owner(name)?.down(name);
  }

  /** Starts the replica's process again on its own address and port; resolves once it serves. */
  async restart(name: string): Promise<ManagedProcess> {
    const owner = this.owner(name);
    if (owner === undefined) throw new Error(`no replica ${name} runs here`);
    return owner.restart(name);
  }

  close(): Promise<void> {
    return this.dns?.close() ?? Promise.resolve();
  }

  private owner(name: string): ReplicaSet | undefined {
    return [...this.sets.values()].find((set) => set.has(name));
  }

  private set(worker: string): ReplicaSet {
    const set = this.sets.get(worker);
    if (set === undefined) {
      throw new Error(
        `${worker} is not running here (running: ${[...this.sets.keys()].join(', ') || 'none'})`,
      );
    }
    return set;
  }
}

function setOptions(options: FleetOptions, worker: string, port: number) {
  return {
    worker,
    port,
    env: options.envOf(worker),
    spawn: options.spawn,
    leaving: options.leaving,
    readyTimeoutMs: options.readyTimeoutMs,
  };
}
