// The same TLS files as the gRPC port, for the worker's other listener the gateway reaches (the
// browser's DevTools relay, plain Node HTTPS): read at once, read again on an interval, and handed
// to whoever rebuilds a TLS context, only when they changed. grpc-js's certificate providers do
// this for gRPC; Node's https has no such thing.
import { readFileSync } from 'node:fs';
import { TLS_REFRESH_INTERVAL_MS } from './tls.js';

/** PEM contents, as Node's tls options take them. */
export interface TlsPems {
  readonly cert?: Buffer | undefined;
  readonly key?: Buffer | undefined;
  readonly ca?: Buffer | undefined;
}

export interface TlsFilePaths {
  readonly certFile?: string | undefined;
  readonly keyFile?: string | undefined;
  readonly caFile?: string | undefined;
}

export interface TlsFileWatch {
  /** What the files held at the last reading that succeeded. */
  current(): TlsPems;
  /** Called with the new contents after a reading that found a change. */
  onChange(listener: (pems: TlsPems) => void): void;
  close(): void;
}

/**
 * Reads the files now (throwing when one cannot be read: start-up checked them) and again every
 * intervalMs. A reading that fails (a file being replaced) keeps the last contents. The timer does
 * not keep the process alive.
 */
export function watchTlsFiles(paths: TlsFilePaths, intervalMs = TLS_REFRESH_INTERVAL_MS): TlsFileWatch {
  const read = (): TlsPems => ({
    cert: paths.certFile === undefined ? undefined : readFileSync(paths.certFile),
    key: paths.keyFile === undefined ? undefined : readFileSync(paths.keyFile),
    ca: paths.caFile === undefined ? undefined : readFileSync(paths.caFile),
  });
  let pems = read();
  const listeners: ((pems: TlsPems) => void)[] = [];
  const same = (a: Buffer | undefined, b: Buffer | undefined) => (a && b ? a.equals(b) : a === b);
  const timer = setInterval(() => {
    let next: TlsPems;
    try {
      next = read();
    } catch {
      return;
    }
    if (same(next.cert, pems.cert) && same(next.key, pems.key) && same(next.ca, pems.ca)) return;
    pems = next;
    for (const listener of listeners) listener(pems);
  }, intervalMs);
  timer.unref();
  return {
    current: () => pems,
    onChange: (listener) => listeners.push(listener),
    close: () => clearInterval(timer),
  };
}
