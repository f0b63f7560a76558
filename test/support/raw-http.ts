import { request, type IncomingMessage } from 'node:http';

export interface RawResponse {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * One HTTP request with the path sent exactly as written (fetch would normalise `//`, `/./` and
 * some escapes), for tests of how the gateway reads unusual spellings.
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
