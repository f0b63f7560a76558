import { waitForServing } from '@switchboard/grpc';
import { freePort } from './ports.js';
import type { ManagedProcess } from './process.js';

/** One running process of a worker, as the cluster's callers see it. */
export interface Replica {
  /** The process name in logs: the worker's own name in the plain mode, `llm-1`, `llm-2`, … with replicas. */
  name: string;
  worker: string;
  /** Its own listen address (127.0.0.1 in the plain mode, 127.0.0.2 onward with replicas). */
  host: string;
  /** The gRPC port, the same for every replica of a worker. */
  port: number;
  /** `host:port` of its gRPC server. */
  address: string;
  /** Its own Prometheus endpoint, so callers can count what each replica served. */
  metricsUrl: string;
  pid: number | undefined;
}

export interface ReplicaSetOptions {
  worker: string;
  /** The gRPC port every replica listens on, each on its own host. */
  port: number;
  /** What every replica's environment holds besides its listeners (shared settings, broker user). */
  env: NodeJS.ProcessEnv;
  nextHost: () => string;
  nameOf: (ordinal: number) => string;
  spawn: (worker: string, name: string, env: NodeJS.ProcessEnv) => ManagedProcess;
  /** Told the serving replicas' hosts whenever they change: the DNS records behind the worker's name. */
  onHostsChange?: (hosts: string[]) => void;
  /** Processes stopped on purpose are added here, so their exit is not taken for a crash. */
  leaving: WeakSet<ManagedProcess>;
  readyTimeoutMs: number;
}

interface Member {
  replica: Replica;
  proc: ManagedProcess;
  /** What its process was started with, so a restart gets the same listeners. */
  env: NodeJS.ProcessEnv;
  /** False while its process is down: it is out of the name until it serves again. */
  serving: boolean;
  /** Start order: replicas that start together may serve in any order, but are listed as started. */
  ordinal: number;
}

/**
 * The processes of one worker, scaled one at a time as a Deployment is: a new replica joins the
 * name only once it reports SERVING (a readiness gate), and a leaving one is taken out of the name
 * before it gets SIGTERM, so gateways stop choosing it while it drains what it already has.
 */
export class ReplicaSet {
  private readonly members: Member[] = [];
  private ordinal = 0;
  /** The browser's DevTools relay port: one per worker, like its gRPC port. */
  private devtoolsPort: number | undefined;

  constructor(private readonly options: ReplicaSetOptions) {}

  get worker(): string {
    return this.options.worker;
  }

  get replicas(): Replica[] {
    return this.members.map((member) => member.replica);
  }

  /** Starts one more process, waits until it serves, then adds it to the name. */
  async add(): Promise<Replica> {
    const { worker, port } = this.options;
    const host = this.options.nextHost();
    const ordinal = ++this.ordinal;
    const name = this.options.nameOf(ordinal);
    const metricsPort = await freePort();
    const env = {
      ...this.options.env,
      GRPC_HOST: host,
      GRPC_PORT: String(port),
      METRICS_PORT: String(metricsPort),
      ...(await this.ownListeners(host)),
    };
    const proc = this.options.spawn(worker, name, env);
    const address = `${host}:${port}`;
    await this.untilServing(proc, address);
    const replica: Replica = {
      name,
      worker,
      host,
      port,
      address,
      metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
      pid: proc.pid,
    };
    this.members.push({ replica, proc, env, ordinal, serving: true });
    this.members.sort((a, b) => a.ordinal - b.ordinal);
    this.publish();
    return replica;
  }

  /** Takes a replica (the newest unless named) out of the name, then stops it; resolves once it exited. */
  async remove(name?: string): Promise<Replica> {
    const at =
      name === undefined
        ? this.members.length - 1
        : this.members.findIndex((member) => member.replica.name === name);
    const member = this.members[at];
    if (member === undefined) {
      throw new Error(
        name === undefined
          ? `${this.worker} has no replica to remove`
          : `${this.worker} has no replica ${name} (${this.replicas.map((r) => r.name).join(', ') || 'none'})`,
      );
    }
    this.members.splice(at, 1);
    this.publish();
    this.options.leaving.add(member.proc);
    await member.proc.stop(10_000);
    return member.replica;
  }

  /** Whether `name` is one of this worker's replicas (not removed). */
  has(name: string): boolean {
    return this.members.some((member) => member.replica.name === name);
  }

  /**
   * A replica whose process exited on its own leaves the name until it serves again, as an unready
   * pod leaves its Service's endpoints.
   */
  down(name: string): void {
    const member = this.members.find((m) => m.replica.name === name);
    if (member === undefined || !member.serving) return;
    member.serving = false;
    this.publish();
  }

  /**
   * Starts a replica whose process exited again as it was (same name, address, ports), so the
   * gateway's connections to it come back; it rejoins the name once it reports SERVING.
   */
  async restart(name: string): Promise<ManagedProcess> {
    const member = this.members.find((m) => m.replica.name === name);
    if (member === undefined) throw new Error(`${this.worker} has no replica ${name}`);
    const proc = this.options.spawn(this.worker, name, member.env);
    member.proc = proc;
    member.replica = { ...member.replica, pid: proc.pid };
    await this.untilServing(proc, member.replica.address);
    member.serving = true;
    this.publish();
    return proc;
  }

  /** Waits until `proc` reports SERVING; otherwise stops it (on purpose, not a crash) and fails. */
  private async untilServing(proc: ManagedProcess, address: string): Promise<void> {
    // A process that dies during start-up (a taken port, a bad model) ends the wait at once.
    const gone = new AbortController();
    void proc.exited.then(() => gone.abort());
    const status = await waitForServing(address, {
      timeoutMs: this.options.readyTimeoutMs,
      signal: gone.signal,
    }).catch(() => 'EXITED');
    if (status !== 'SERVING') {
      this.options.leaving.add(proc);
      await proc.stop();
      throw new Error(
        `${proc.name} did not report SERVING at ${address} (${status}):\n${proc.recentOutput()}`,
      );
    }
  }

  private publish(): void {
    this.options.onHostsChange?.(
      this.members.filter((member) => member.serving).map((member) => member.replica.host),
    );
  }

  /**
   * Listeners a worker has besides gRPC and metrics. The browser worker announces its own gRPC and
   * DevTools addresses in the session registry (sessions are sticky to it), so each replica
   * announces the host it listens on.
   */
  private async ownListeners(host: string): Promise<NodeJS.ProcessEnv> {
    if (this.worker !== 'browser') return {};
    this.devtoolsPort ??= await freePort();
    return {
      DEVTOOLS_PORT: String(this.devtoolsPort),
      DEVTOOLS_HOST: host,
      // The plain mode leaves the worker's own default (and any operator setting) alone.
      ...(host === '127.0.0.1' ? {} : { BROWSER_ADVERTISE_HOST: host }),
    };
  }
}
