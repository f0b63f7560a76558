// The benches' streaming client: node:http with kept-alive sockets, parsing only what they
// measure (the arrival of each delta event, counted per chunk; the usage and any error from the
// last events). The load generator shares the machine's cores with the gateway and the workers,
// so what it spends per token is taken from what is measured.
import http from 'node:http';

export interface StreamedQuery {
  status: number;
  /** Whether a refusal carried Retry-After. */
  retryAfter: boolean;
  /** When each delta event arrived (performance.now()). */
  deltaArrivals: number[];
  completionTokens: number;
  /** The error code of a refusal's body or of the stream's error event, if any. */
  code?: string;
}

/** POSTs `body` to `/query` as a stream and reads it to its end. */
export function streamedQuery(
  agent: http.Agent,
  url: string,
  key: string,
  body: Record<string, unknown>,
): Promise<StreamedQuery> {
  const payload = JSON.stringify({ ...body, stream: true });
  return new Promise((resolve, reject) => {
    const headers = {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
    };
    const req = http.request(`${url}/query`, { method: 'POST', agent, headers }, (res) => {
      res.setEncoding('utf8');
      const deltaArrivals: number[] = [];
      let tail = '';
      res.on('data', (chunk: string) => {
        const now = performance.now();
        for (let at = chunk.indexOf('"delta":'); at >= 0; at = chunk.indexOf('"delta":', at + 1)) {
          deltaArrivals.push(now);
        }
        tail = (tail + chunk).slice(-4096);
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          retryAfter: res.headers['retry-after'] !== undefined,
          deltaArrivals,
          completionTokens: Number(/"completion_tokens":(\d+)/.exec(tail)?.[1] ?? 0),
          code: /"code":"([a-z_]+)"/.exec(tail)?.[1],
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}
