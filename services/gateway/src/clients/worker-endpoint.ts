/** Where a worker listens and how long its calls may take (from the gateway's config). */
export interface WorkerEndpoint {
  address: string;
  deadlineMs: number;
  /** CLUSTER_SECRET, sent on every call: workers refuse calls without it. */
  clusterSecret: string;
}
