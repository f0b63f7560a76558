// TLS for the gRPC hop between the gateway and the workers, as environment variables: the paths of
// PEM files (a Kubernetes TLS Secret mounted as files, as cert-manager writes it), never their
// contents, because the files are read again while the process runs and a renewed certificate is
// picked up without a restart. Here they are only checked once, at start-up, so a wrong path, a
// key that does not belong to its certificate or a file that is not PEM fails start-up with a clear
// message instead of every handshake failing later.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';

const path = () => z.string().min(1).optional();

/** What a worker (every gRPC server) reads. */
export const grpcServerTlsEnvFields = {
  GRPC_TLS_CERT_FILE: path().describe(
    "PEM certificate (then intermediates) of the gRPC port (and the browser's DevTools relay); with GRPC_TLS_KEY_FILE turns TLS on. Re-read every minute. Unset = plaintext (docs/security.md).",
  ),
  GRPC_TLS_KEY_FILE: path().describe('PEM private key of GRPC_TLS_CERT_FILE.'),
  GRPC_TLS_CA_FILE: path().describe(
    'PEM CA bundle client certificates must chain to (mutual TLS); unset = no client certificate asked for.',
  ),
  GRPC_HEALTH_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .optional()
    .describe('Plaintext port serving grpc.health.v1 only, for kubelet gRPC probes; unset = none.'),
};

/** What the gateway (every gRPC client it creates) reads. */
export const grpcClientTlsEnvFields = {
  GRPC_TLS_CA_FILE: path().describe(
    'PEM CA bundle worker certificates must chain to; turns TLS on for every call to a worker and DevTools relay. Re-read every minute. Unset = plaintext (docs/security.md).',
  ),
  GRPC_TLS_CERT_FILE: path().describe(
    'PEM client certificate for workers that require one (mutual TLS); with GRPC_TLS_KEY_FILE.',
  ),
  GRPC_TLS_KEY_FILE: path().describe('PEM private key of GRPC_TLS_CERT_FILE.'),
  GRPC_TLS_SERVER_NAME: z
    .string()
    .regex(/^[A-Za-z0-9.-]+$/, 'expected a DNS name')
    .optional()
    .describe(
      "Name every worker certificate is checked against; unset = the host of the worker's `<NAME>_ADDR` (its Service: replicas are dialled by pod IP, which no certificate names).",
    ),
};

interface ServerTlsEnv {
  GRPC_PORT: number;
  GRPC_TLS_CERT_FILE?: string | undefined;
  GRPC_TLS_KEY_FILE?: string | undefined;
  GRPC_TLS_CA_FILE?: string | undefined;
  GRPC_HEALTH_PORT?: number | undefined;
}

interface ClientTlsEnv {
  GRPC_TLS_CA_FILE?: string | undefined;
  GRPC_TLS_CERT_FILE?: string | undefined;
  GRPC_TLS_KEY_FILE?: string | undefined;
  GRPC_TLS_SERVER_NAME?: string | undefined;
}

/** A worker's TLS files, once checked; undefined = plaintext. */
export interface ServerTlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** When set, clients must present a certificate that chains to it. */
  readonly caFile?: string | undefined;
}

/** The gateway's TLS files, once checked; undefined = plaintext. */
export interface ClientTlsFiles {
  readonly caFile: string;
  readonly certFile?: string | undefined;
  readonly keyFile?: string | undefined;
  readonly serverName?: string | undefined;
}

type Issue = (variable: string, message: string) => void;
const reporter =
  (ctx: z.RefinementCtx): Issue =>
  (variable, message) =>
    ctx.addIssue({ code: 'custom', path: [variable], message });

/** For a worker schema's superRefine: pairs, PEM contents, and a health port apart from the main one. */
export function checkGrpcServerTlsEnv(e: ServerTlsEnv, ctx: z.RefinementCtx): void {
  const issue = reporter(ctx);
  checkPair(e, issue);
  if (e.GRPC_TLS_CA_FILE !== undefined) {
    if (e.GRPC_TLS_CERT_FILE === undefined)
      issue(
        'GRPC_TLS_CA_FILE',
        'needs GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE (client certificates are asked for only over TLS)',
      );
    checkCaBundle('GRPC_TLS_CA_FILE', e.GRPC_TLS_CA_FILE, issue);
  }
  // Port 0 twice is two free ports, not a clash.
  if (e.GRPC_HEALTH_PORT !== undefined && e.GRPC_HEALTH_PORT !== 0 && e.GRPC_HEALTH_PORT === e.GRPC_PORT)
    issue('GRPC_HEALTH_PORT', `must differ from GRPC_PORT (${e.GRPC_PORT})`);
}

/** For the gateway schema's superRefine: TLS is on with a CA; a certificate or name without one is a mistake. */
export function checkGrpcClientTlsEnv(e: ClientTlsEnv, ctx: z.RefinementCtx): void {
  const issue = reporter(ctx);
  checkPair(e, issue);
  if (e.GRPC_TLS_CA_FILE === undefined) {
    for (const name of ['GRPC_TLS_CERT_FILE', 'GRPC_TLS_SERVER_NAME'] as const) {
      if (e[name] !== undefined)
        issue(name, "needs GRPC_TLS_CA_FILE (the CA the workers' certificates chain to)");
    }
    return;
  }
  checkCaBundle('GRPC_TLS_CA_FILE', e.GRPC_TLS_CA_FILE, issue);
}

export function grpcServerTlsFrom(e: ServerTlsEnv): ServerTlsFiles | undefined {
  if (e.GRPC_TLS_CERT_FILE === undefined || e.GRPC_TLS_KEY_FILE === undefined) return undefined;
  return { certFile: e.GRPC_TLS_CERT_FILE, keyFile: e.GRPC_TLS_KEY_FILE, caFile: e.GRPC_TLS_CA_FILE };
}

export function grpcClientTlsFrom(e: ClientTlsEnv): ClientTlsFiles | undefined {
  if (e.GRPC_TLS_CA_FILE === undefined) return undefined;
  return {
    caFile: e.GRPC_TLS_CA_FILE,
    certFile: e.GRPC_TLS_CERT_FILE,
    keyFile: e.GRPC_TLS_KEY_FILE,
    serverName: e.GRPC_TLS_SERVER_NAME,
  };
}

/** A certificate and its key: both or neither, readable, PEM, and belonging together. */
function checkPair(e: ClientTlsEnv, issue: Issue): void {
  const { GRPC_TLS_CERT_FILE: certFile, GRPC_TLS_KEY_FILE: keyFile } = e;
  if (certFile === undefined && keyFile === undefined) return;
  if (certFile === undefined || keyFile === undefined) {
    const [given, missing] =
      certFile === undefined
        ? ['GRPC_TLS_KEY_FILE', 'GRPC_TLS_CERT_FILE']
        : ['GRPC_TLS_CERT_FILE', 'GRPC_TLS_KEY_FILE'];
    issue(missing, `required when ${given} is set`);
    return;
  }
  const chain = readCertificates('GRPC_TLS_CERT_FILE', certFile, issue);
  const keyPem = readPem('GRPC_TLS_KEY_FILE', keyFile, issue);
  if (chain === undefined || keyPem === undefined) return;
  let key;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    issue('GRPC_TLS_KEY_FILE', `${keyFile} holds no PEM private key`);
    return;
  }
  if (!chain[0]!.checkPrivateKey(key))
    issue('GRPC_TLS_KEY_FILE', `${keyFile} is not the key of the certificate in ${certFile}`);
}

function checkCaBundle(variable: string, file: string, issue: Issue): void {
  const certificates = readCertificates(variable, file, issue);
  if (certificates?.some((certificate) => !certificate.ca))
    issue(variable, `${file} holds a certificate that is not a CA (basicConstraints CA:FALSE or missing)`);
}

function readPem(variable: string, file: string, issue: Issue): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    issue(variable, `cannot read ${file} (${(error as NodeJS.ErrnoException).code})`);
    return undefined;
  }
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Every PEM certificate of a file, in order; reports a file with none or with a broken one. */
function readCertificates(variable: string, file: string, issue: Issue): X509Certificate[] | undefined {
  const pem = readPem(variable, file, issue);
  if (pem === undefined) return undefined;
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) {
    issue(variable, `${file} holds no PEM certificate`);
    return undefined;
  }
  try {
    return blocks.map((block) => new X509Certificate(block));
  } catch (error) {
    issue(variable, `${file} holds an invalid certificate (${(error as Error).message})`);
    return undefined;
  }
}
