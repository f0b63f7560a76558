/** The most processes of one worker the local runner starts; more would only starve 2-core machines. */
export const MAX_REPLICAS = 16;

/** The domain the runner's DNS server answers for: `<worker>.switchboard.local`. */
export const REPLICA_DOMAIN = 'switchboard.local';

export const replicaDnsName = (worker: string) => `${worker}.${REPLICA_DOMAIN}`;

/**
 * Reads `SWITCHBOARD_REPLICAS` (`llm=3,diffusion=2`): how many processes of each worker to start.
 * Unset or blank means the runner's plain mode (one process per worker on 127.0.0.1, no DNS), so
 * it returns undefined; workers it does not name get one replica. Every bad entry is named in one
 * error, so a typo is fixed in one go rather than one start-up at a time.
 */
export function parseReplicas(
  value: string | undefined,
  workers: readonly string[],
): Map<string, number> | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const counts = new Map<string, number>();
  const problems: string[] = [];
  for (const entry of value.split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    const match = /^([a-z]+)=(\d+)$/.exec(entry);
    if (!match) {
      problems.push(`"${entry}" is not <worker>=<count>`);
      continue;
    }
    const [, worker = '', digits = ''] = match;
    const count = Number(digits);
    if (!workers.includes(worker)) problems.push(`"${worker}" is not a worker (${workers.join(', ')})`);
    else if (counts.has(worker)) problems.push(`"${worker}" is given twice`);
    else if (!Number.isInteger(count) || count < 1 || count > MAX_REPLICAS)
      problems.push(`"${entry}": the count must be 1 to ${MAX_REPLICAS}`);
    else counts.set(worker, count);
  }
  if (problems.length > 0) {
    throw new Error(
      `SWITCHBOARD_REPLICAS="${value}": ${problems.join('; ')} (example: SWITCHBOARD_REPLICAS=llm=3,whisper=2)`,
    );
  }
  return counts;
}
