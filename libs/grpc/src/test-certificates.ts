// Real X.509 certificates for TLS tests, made with the openssl CLI (Node's crypto can make keys but
// not certificates): a cluster CA, a worker certificate signed by it, the gateway's client
// certificate, and a rogue CA with a client certificate of its own. Exported as
// '@switchboard/grpc/test-certificates' for the cross-service tests; not part of the library.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A certificate's PEM files. */
export interface CertificateFiles {
  readonly cert: string;
  readonly key: string;
}

export interface TestCertificates {
  readonly dir: string;
  /** The cluster CA: what workers and the gateway trust. */
  readonly ca: CertificateFiles;
  /** A worker's server certificate: DNS `switchboard-llm`, IP 127.0.0.1. */
  readonly server: CertificateFiles;
  /** The gateway's client certificate, from the cluster CA. */
  readonly client: CertificateFiles;
  /** A CA nobody trusts, and a client certificate from it. */
  readonly rogueCa: CertificateFiles;
  readonly rogueClient: CertificateFiles;
  /** A server certificate from the rogue CA with the same names as `server`. */
  readonly rogueServer: CertificateFiles;
  /** Removes the folder. */
  remove(): void;
}

/** The DNS name in the server certificate (a headless Service's name). */
export const SERVER_DNS_NAME = 'switchboard-llm';

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A new unencrypted P-256 key: how every `openssl req` here starts. */
const P256 = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const newKey = (key: string, name: string) => [...P256, '-keyout', key, '-subj', `/CN=${name}`];
const signedBy = (issuer: CertificateFiles) => ['-CA', issuer.cert, '-CAkey', issuer.key, '-CAcreateserial'];

function makeCa(dir: string, name: string): CertificateFiles {
  const files = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  const extensions = ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign'];
  openssl(
    dir,
    ['req', '-x509', '-days', '2', '-out', files.cert]
      .concat(newKey(files.key, name))
      .concat(extensions.flatMap((extension) => ['-addext', extension])),
  );
  return files;
}

function makeLeaf(dir: string, name: string, issuer: CertificateFiles, extensions: string): CertificateFiles {
  const files = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, `basicConstraints=critical,CA:FALSE\n${extensions}\n`);
  openssl(dir, ['req', '-new', '-out', csr].concat(newKey(files.key, name)));
  const x509 = ['x509', '-req', '-in', csr, '-days', '2', '-out', files.cert, '-extfile', ext];
  openssl(dir, [...x509, ...signedBy(issuer)]);
  return files;
}

/** Makes every certificate in a new temporary folder (a few hundred ms). Needs the openssl CLI. */
export function makeTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-tls-'));
  const serverNames = `subjectAltName=DNS:${SERVER_DNS_NAME},IP:127.0.0.1\nextendedKeyUsage=serverAuth`;
  const clientUse = 'extendedKeyUsage=clientAuth';
  const ca = makeCa(dir, 'cluster-ca');
  const rogueCa = makeCa(dir, 'rogue-ca');
  return {
    dir,
    ca,
    server: makeLeaf(dir, 'server', ca, serverNames),
    client: makeLeaf(dir, 'gateway', ca, clientUse),
    rogueCa,
    rogueClient: makeLeaf(dir, 'rogue-client', rogueCa, clientUse),
    rogueServer: makeLeaf(dir, 'rogue-server', rogueCa, serverNames),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
