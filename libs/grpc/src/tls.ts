// TLS for gRPC from PEM files that are read again while the process runs: cert-manager renews a
// certificate into its Secret and the kubelet rewrites the mounted files, and new connections must
// use the new ones without a restart. grpc-js's FileWatcherCertificateProvider re-reads the files
// every refreshIntervalMs and hands them to the credentials, which rebuild their TLS context; a
// connection already open keeps the certificate it was made with.
import { isIP } from 'node:net';
import {
  type ChannelCredentials,
  type ChannelOptions,
  ServerCredentials,
  credentials,
  experimental,
} from '@grpc/grpc-js';

/** A server's certificate and key; with caFile, clients must present a certificate chaining to it. */
export interface ServerTls {
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile?: string | undefined;
}

/** A client's trust (caFile), its own certificate for mutual TLS, and the name servers must carry. */
export interface ClientTls {
  readonly caFile: string;
  readonly certFile?: string | undefined;
  readonly keyFile?: string | undefined;
  /** Checked against the server's certificate instead of the host dialled (pods are dialled by IP). */
  readonly serverName?: string | undefined;
}

/** How often the files are read again: well within cert-manager's renewal margin. */
export const TLS_REFRESH_INTERVAL_MS = 60_000;

/** Credentials and channel options every client of one process shares (one file watcher). */
export interface ClientTransport {
  readonly credentials: ChannelCredentials;
  readonly channelOptions: ChannelOptions;
  readonly secure: boolean;
}

export const plaintextTransport: ClientTransport = {
  credentials: credentials.createInsecure(),
  channelOptions: {},
  secure: false,
};

const SERVER_NAME_OPTION = 'grpc.ssl_target_name_override';

/**
 * The transport for the replicas of a worker `name` (a headless Service's host name): they are
 * dialled by pod IP, which no certificate names, so unless the transport names a server already,
 * their certificates are checked against `name`. Plaintext, and IP literals, stay as they are.
 */
export function checkingServerName(transport: ClientTransport, name: string): ClientTransport {
  if (!transport.secure || SERVER_NAME_OPTION in transport.channelOptions || isIP(name) !== 0)
    return transport;
  return { ...transport, channelOptions: { ...transport.channelOptions, [SERVER_NAME_OPTION]: name } };
}

/** Plaintext without tls; otherwise TLS whose files are re-read every refreshIntervalMs. */
export function clientTransport(
  tls: ClientTls | undefined,
  refreshIntervalMs = TLS_REFRESH_INTERVAL_MS,
): ClientTransport {
  if (tls === undefined) return plaintextTransport;
  const ca = new experimental.FileWatcherCertificateProvider({
    caCertificateFile: tls.caFile,
    refreshIntervalMs,
  });
  const identity =
    tls.certFile !== undefined && tls.keyFile !== undefined
      ? new experimental.FileWatcherCertificateProvider({
          certificateFile: tls.certFile,
          privateKeyFile: tls.keyFile,
          refreshIntervalMs,
        })
      : null;
  return {
    credentials: experimental.createCertificateProviderChannelCredentials(ca, identity),
    // grpc-js checks the certificate against this name and sends it as SNI.
    channelOptions: tls.serverName === undefined ? {} : { [SERVER_NAME_OPTION]: tls.serverName },
    secure: true,
  };
}

export interface ServerTransport {
  readonly credentials: ServerCredentials;
  /** Resolves once the files have been read, so the first connections are not dropped. */
  readonly ready: Promise<void>;
}

/** Plaintext without tls; otherwise TLS whose files are re-read every refreshIntervalMs. */
export function serverTransport(
  tls: ServerTls | undefined,
  refreshIntervalMs = TLS_REFRESH_INTERVAL_MS,
): ServerTransport {
  if (tls === undefined) return { credentials: ServerCredentials.createInsecure(), ready: Promise.resolve() };
  const identity = new experimental.FileWatcherCertificateProvider({
    certificateFile: tls.certFile,
    privateKeyFile: tls.keyFile,
    refreshIntervalMs,
  });
  const ca =
    tls.caFile === undefined
      ? null
      : new experimental.FileWatcherCertificateProvider({ caCertificateFile: tls.caFile, refreshIntervalMs });
  // grpc-js 1.14 passes this function's first argument on as the *identity* provider and its
  // second as the (optional) CA provider, whatever the parameter names say; server.test.ts's TLS
  // cases fail if a later version swaps them back.
  const serverCredentials = experimental.createCertificateProviderServerCredentials(
    identity,
    ca,
    ca !== null,
  );
  return { credentials: serverCredentials, ready: primed(identity, ca) };
}

/**
 * A server binds its port with whatever the providers have read so far and drops connections until
 * they have read something: waiting for the first reading first (the providers keep it for twice
 * their interval) closes that window. Fails when a file cannot be read.
 */
async function primed(
  identity: experimental.CertificateProvider,
  ca: experimental.CertificateProvider | null,
): Promise<void> {
  const first = (add: (listener: (update: unknown) => void) => void, remove: typeof add, what: string) =>
    new Promise<void>((resolve, reject) => {
      const listener = (update: unknown) => {
        remove(listener);
        if (update === null) reject(new Error(`cannot read the gRPC TLS ${what}`));
        else resolve();
      };
      add(listener);
    });
  await Promise.all([
    first(
      (l) => identity.addIdentityCertificateListener(l),
      (l) => identity.removeIdentityCertificateListener(l),
      'certificate and key',
    ),
    ca === null
      ? undefined
      : first(
          (l) => ca.addCaCertificateListener(l),
          (l) => ca.removeCaCertificateListener(l),
          'CA bundle',
        ),
  ]);
}
