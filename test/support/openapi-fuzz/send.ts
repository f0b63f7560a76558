import { request } from 'node:http';

export interface FuzzRequest {
  method: string;
  /** Path and query, already encoded. */
  path: string;
  /** An array value sends the header once per element (a duplicated header line). */
  headers: Record<string, string | string[]>;
  body?: Buffer;
  /** What was done to the request, for the failure report. */
  variant: string;
}

export interface FuzzAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * One request over a fresh connection, written as given (fetch would merge duplicated headers and
 * refuse some bytes). Rejects when no complete answer arrives within `timeoutMs`.
 */
export function send(baseUrl: string, fuzz: FuzzRequest, timeoutMs: number): Promise<FuzzAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: hostname, port, method: fuzz.method, path: fuzz.path, headers: fuzz.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(fuzz.body);
  });
}
