import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startOnFreePort } from './ports.js';
import { findExecutable, ManagedProcess, waitUntilReady } from './process.js';

/**
 * A Prometheus of the runner's own (SWITCHBOARD_PROMETHEUS=1): Debian's `prometheus` binary as a
 * child process on a free loopback port, scraping every process of the local cluster with the
 * target labels Kubernetes monitors give (`namespace`, `pod`), so the chart's dashboard, alert and
 * KEDA queries can be asked of it unchanged. A system Prometheus (Debian's service on :9090) is
 * never used: it scrapes other things and its state is not ours.
 */

const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 30_000;

/** The namespace label every local target carries: what the chart is rendered for in tests. */
export const LOCAL_NAMESPACE = 'switchboard';

/** One process to scrape. */
export interface ScrapeTarget {
  /** The pod label: `<service>-<n>`. */
  pod: string;
  /** `host:port` of its `GET /metrics`. */
  address: string;
}

export interface PrometheusOptions {
  /** Holds the configuration, the targets file and the TSDB; emptied at start (a fresh store per run). */
  dir: string;
  /** Rule files loaded as `rule_files` (the chart's alerts), so alerts evaluate locally. */
  ruleFiles?: readonly string[];
  /** Both scrape and rule evaluation interval (short: a local run wants data within seconds). */
  interval?: string;
  targets?: readonly ScrapeTarget[];
  /** Sees every line Prometheus logs (warnings and errors only). */
  onLine?: (line: string) => void;
}

export interface PrometheusHandle {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly process: ManagedProcess;
  /** Replaces the scraped processes; Prometheus rereads the file by itself, no restart. */
  setTargets(targets: readonly ScrapeTarget[]): Promise<void>;
  stop(): Promise<void>;
}

const TARGETS_FILE = 'targets.json';

/** The file_sd document: one group per process, labelled as its pod. */
export function targetGroups(targets: readonly ScrapeTarget[]): object[] {
  return targets.map((target) => ({
    targets: [target.address],
    labels: { namespace: LOCAL_NAMESPACE, pod: target.pod },
  }));
}

/**
 * prometheus.yml (JSON is YAML): the cluster's processes come from a file the runner rewrites as
 * replicas come and go (file_sd_configs, watched by Prometheus), Prometheus scrapes itself too.
 */
export function prometheusConfig(options: {
  dir: string;
  port: number;
  ruleFiles: readonly string[];
  interval: string;
}): object {
  return {
    global: { scrape_interval: options.interval, evaluation_interval: options.interval },
    rule_files: [...options.ruleFiles],
    scrape_configs: [
      {
        job_name: 'switchboard',
        // Polled as well as watched: a missed file event must not hide a new replica for long.
        file_sd_configs: [{ files: [join(options.dir, TARGETS_FILE)], refresh_interval: '5s' }],
      },
      {
        job_name: 'prometheus',
        static_configs: [
          {
            targets: [`${HOST}:${options.port}`],
            labels: { namespace: LOCAL_NAMESPACE, pod: 'prometheus-0' },
          },
        ],
      },
    ],
  };
}

/** Writes beside, then renames: Prometheus never reads half a targets file. */
async function writeAtomically(file: string, text: string): Promise<void> {
  const partial = `${file}.partial`;
  await writeFile(partial, text);
  await rename(partial, file);
}

export async function startPrometheus(options: PrometheusOptions): Promise<PrometheusHandle> {
  const command = findExecutable('prometheus');
  const { dir } = options;
  await rm(dir, { recursive: true, force: true });
  await mkdir(join(dir, 'data'), { recursive: true });
  const targetsFile = join(dir, TARGETS_FILE);
  const setTargets = (targets: readonly ScrapeTarget[]) =>
    writeAtomically(targetsFile, JSON.stringify(targetGroups(targets), null, 2));
  await setTargets(options.targets ?? []);

  const launch = async (port: number): Promise<ManagedProcess> => {
    const configFile = join(dir, 'prometheus.yml');
    const config = prometheusConfig({
      dir,
      port,
      ruleFiles: options.ruleFiles ?? [],
      interval: options.interval ?? '2s',
    });
    await writeFile(configFile, JSON.stringify(config, null, 2));
    const proc = new ManagedProcess(
      'prometheus',
      command,
      [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=${HOST}:${port}`,
        '--log.level=warn',
      ],
      undefined,
      { onLine: (line) => options.onLine?.(line) },
    );
    // Ready = this port answers as a Prometheus does: another server that took the port in the
    // meantime (a test's website answers 200 on any path) must not pass for ours.
    const ready = () =>
      fetch(`http://${HOST}:${port}/-/ready`).then(
        async (res) => res.ok && (await res.text()).startsWith('Prometheus Server is Ready'),
        () => false,
      );
    await waitUntilReady(proc, ready, START_TIMEOUT_MS);
    return proc;
  };

  const { port, started: proc } = await startOnFreePort(HOST, launch);
  return {
    url: `http://${HOST}:${port}`,
    process: proc,
    setTargets,
    stop: () => proc.stop(),
  };
}
