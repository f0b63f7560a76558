import { randomInt } from 'node:crypto';
import { freePort, startDnsServer, type DnsServer } from '@switchboard/devcluster';
import { startWorker, type WorkerProcess } from './worker.js';

/** Replicas of one worker behind one DNS name, as pods behind a Kubernetes headless Service. */
export interface WorkerReplicas {
  /** `<name>:<port>`, the worker's address for the gateway. */
  address: string;
  /** What a gateway needs to route to them: `<NAME>_ADDR` and WORKER_DNS_SERVER. */
  gatewayEnv: Record<string, string>;
  /** Every replica started, in order; stopped and killed ones stay listed. */
  workers: WorkerProcess[];
  dns: DnsServer;
  /** Starts one more replica on the next loopback address; it joins the name once it serves. */
  add(): Promise<WorkerProcess>;
  stop(): Promise<void>;
}

/**
 * `count` processes of `worker`, each on a loopback address of its own (127.a.b.1, .2, …) and
 * one shared port, behind `<worker>.replicas.test` on a DNS server of their own: the gateway
 * resolves that name through it, as it resolves a headless Service's name in Kubernetes.
 */
export async function startWorkerReplicas(
  worker: string,
  count: number,
  env: Record<string, string>,
): Promise<WorkerReplicas> {
  // A /24 of loopback addresses of this run's own, so parallel test files never share one.
  const prefix = `127.${randomInt(100, 250)}.${randomInt(1, 250)}`;
  let next = 1;
  const port = await freePort(`${prefix}.1`);
  const name = `${worker}.replicas.test`;
  const dns = await startDnsServer({ [name]: [] });
  const workers: WorkerProcess[] = [];
  const hosts: string[] = [];
  const add = async () => {
    const host = `${prefix}.${next++}`;
    const started = await startWorker(worker, { env, host, port });
    workers.push(started);
    hosts.push(host);
    dns.setRecords(name, hosts);
    return started;
  };
  try {
    await Promise.all(Array.from({ length: count }, add));
  } catch (error) {
    await Promise.all(workers.map((w) => w.stop()));
    await dns.close();
    throw error;
  }
  const address = `${name}:${port}`;
  return {
    address,
    gatewayEnv: { [`${worker.toUpperCase()}_ADDR`]: address, WORKER_DNS_SERVER: dns.address },
    workers,
    dns,
    add,
    async stop() {
      await Promise.all(workers.map((w) => w.stop()));
      await dns.close();
    },
  };
}

/** What a gateway's metrics say about one worker's replicas (per-replica call counts, in flight). */
export interface ReplicaMetrics {
  /** switchboard_worker_calls_total by replica address. */
  calls(): Promise<Map<string, number>>;
  /** Calls per replica address since `before` (an earlier calls()). */
  callsSince(before: Map<string, number>): Promise<Map<string, number>>;
  /** The replica addresses the gateway has resolved now (its in-flight gauge lists each one). */
  resolved(): Promise<string[]>;
  inFlight(address: string): Promise<number>;
}

export function replicaMetrics(metricsUrl: string, worker: string): ReplicaMetrics {
  const series = async (name: string): Promise<Map<string, number>> => {
    const text = await (await fetch(metricsUrl)).text();
    const values = new Map<string, number>();
    for (const line of text.split('\n')) {
      const match = /^(\w+)\{([^}]*)\} (\S+)$/.exec(line);
      if (match?.[1] !== name || !match[2]?.includes(`worker="${worker}"`)) continue;
      const address = /address="([^"]+)"/.exec(match[2])?.[1];
      if (address !== undefined) values.set(address, Number(match[3]));
    }
    return values;
  };
  const calls = () => series('switchboard_worker_calls_total');
  return {
    calls,
    async callsSince(before) {
      const now = await calls();
      return new Map([...now].map(([address, count]) => [address, count - (before.get(address) ?? 0)]));
    },
    resolved: async () => [...(await series('switchboard_worker_calls_in_flight')).keys()].sort(),
    inFlight: async (address) => (await series('switchboard_worker_calls_in_flight')).get(address) ?? 0,
  };
}
