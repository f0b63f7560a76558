import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { z } from 'zod';
import {
  checkGrpcClientTlsEnv,
  checkGrpcServerTlsEnv,
  ConfigError,
  env,
  grpcClientTlsEnvFields,
  grpcClientTlsFrom,
  grpcServerTlsEnvFields,
  grpcServerTlsFrom,
  loadConfig,
} from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'switchboard-config-tls-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A self-signed certificate and its key (the openssl CLI: Node's crypto cannot make X.509). */
function certificate(name: string, ca: boolean): { cert: string; key: string } {
  const files = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
      .concat(['-keyout', files.key, '-out', files.cert, '-days', '1', '-subj', `/CN=${name}`])
      .concat(['-addext', `basicConstraints=critical,CA:${ca ? 'TRUE' : 'FALSE'}`]),
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return files;
}

const ca = certificate('ca', true);
const leaf = certificate('leaf', false);
const notPem = join(dir, 'not.pem');
writeFileSync(notPem, 'hello\n');
const missing = join(dir, 'missing.pem');

const server = z
  .object({ GRPC_PORT: env.port(50051), ...grpcServerTlsEnvFields })
  .superRefine(checkGrpcServerTlsEnv)
  .transform((e) => ({ tls: grpcServerTlsFrom(e), healthPort: e.GRPC_HEALTH_PORT }));
const client = z
  .object(grpcClientTlsEnvFields)
  .superRefine(checkGrpcClientTlsEnv)
  .transform((e) => grpcClientTlsFrom(e));

function problems(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  assert.fail('expected a ConfigError');
}

test('unset means plaintext, for workers and the gateway alike', () => {
  assert.deepEqual(loadConfig(server, {}), { tls: undefined, healthPort: undefined });
  assert.equal(loadConfig(client, {}), undefined);
});

test('a worker with a certificate, its key and a CA gets mutual TLS and its health port', () => {
  const config = loadConfig(server, {
    GRPC_TLS_CERT_FILE: leaf.cert,
    GRPC_TLS_KEY_FILE: leaf.key,
    GRPC_TLS_CA_FILE: ca.cert,
    GRPC_HEALTH_PORT: '8086',
  });
  assert.deepEqual(config, {
    tls: { certFile: leaf.cert, keyFile: leaf.key, caFile: ca.cert },
    healthPort: 8086,
  });
});

test('the gateway with a CA, a client certificate and a server name', () => {
  const config = loadConfig(client, {
    GRPC_TLS_CA_FILE: ca.cert,
    GRPC_TLS_CERT_FILE: leaf.cert,
    GRPC_TLS_KEY_FILE: leaf.key,
    GRPC_TLS_SERVER_NAME: 'switchboard-llm',
  });
  assert.deepEqual(config, {
    caFile: ca.cert,
    certFile: leaf.cert,
    keyFile: leaf.key,
    serverName: 'switchboard-llm',
  });
});

test('a certificate without its key, or a key without its certificate, is named', () => {
  assert.deepEqual(
    problems(() => loadConfig(server, { GRPC_TLS_CERT_FILE: leaf.cert })),
    ['GRPC_TLS_KEY_FILE: required when GRPC_TLS_CERT_FILE is set'],
  );
  assert.deepEqual(
    problems(() => loadConfig(client, { GRPC_TLS_CA_FILE: ca.cert, GRPC_TLS_KEY_FILE: leaf.key })),
    ['GRPC_TLS_CERT_FILE: required when GRPC_TLS_KEY_FILE is set'],
  );
});

test('unreadable files, files that are not PEM and a key of another certificate are named', () => {
  assert.deepEqual(
    problems(() =>
      loadConfig(server, {
        GRPC_TLS_CERT_FILE: missing,
        GRPC_TLS_KEY_FILE: notPem,
        GRPC_TLS_CA_FILE: notPem,
      }),
    ),
    [
      `GRPC_TLS_CERT_FILE: cannot read ${missing} (ENOENT)`,
      `GRPC_TLS_CA_FILE: ${notPem} holds no PEM certificate`,
    ],
  );
  assert.deepEqual(
    problems(() => loadConfig(server, { GRPC_TLS_CERT_FILE: leaf.cert, GRPC_TLS_KEY_FILE: notPem })),
    [`GRPC_TLS_KEY_FILE: ${notPem} holds no PEM private key`],
  );
  assert.deepEqual(
    problems(() => loadConfig(server, { GRPC_TLS_CERT_FILE: leaf.cert, GRPC_TLS_KEY_FILE: ca.key })),
    [`GRPC_TLS_KEY_FILE: ${ca.key} is not the key of the certificate in ${leaf.cert}`],
  );
  const broken = join(dir, 'broken.pem');
  writeFileSync(broken, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
  const [problem] = problems(() => loadConfig(client, { GRPC_TLS_CA_FILE: broken }));
  assert.match(problem ?? '', /^GRPC_TLS_CA_FILE: .*broken\.pem holds an invalid certificate/);
});

test('a CA bundle must hold CA certificates', () => {
  assert.deepEqual(
    problems(() => loadConfig(client, { GRPC_TLS_CA_FILE: leaf.cert })),
    [
      `GRPC_TLS_CA_FILE: ${leaf.cert} holds a certificate that is not a CA (basicConstraints CA:FALSE or missing)`,
    ],
  );
});

test('settings that need TLS without it are refused', () => {
  assert.deepEqual(
    problems(() => loadConfig(server, { GRPC_TLS_CA_FILE: ca.cert })),
    [
      'GRPC_TLS_CA_FILE: needs GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE (client certificates are asked for only over TLS)',
    ],
  );
  assert.deepEqual(
    problems(() =>
      loadConfig(client, {
        GRPC_TLS_CERT_FILE: leaf.cert,
        GRPC_TLS_KEY_FILE: leaf.key,
        GRPC_TLS_SERVER_NAME: 'switchboard-llm',
      }),
    ),
    [
      "GRPC_TLS_CERT_FILE: needs GRPC_TLS_CA_FILE (the CA the workers' certificates chain to)",
      "GRPC_TLS_SERVER_NAME: needs GRPC_TLS_CA_FILE (the CA the workers' certificates chain to)",
    ],
  );
});

test('the health port must differ from the gRPC port (two free ports, 0, are fine)', () => {
  assert.deepEqual(
    problems(() => loadConfig(server, { GRPC_PORT: '50051', GRPC_HEALTH_PORT: '50051' })),
    ['GRPC_HEALTH_PORT: must differ from GRPC_PORT (50051)'],
  );
  assert.equal(loadConfig(server, { GRPC_PORT: '0', GRPC_HEALTH_PORT: '0' }).healthPort, 0);
});
