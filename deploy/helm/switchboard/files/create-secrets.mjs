// Creates the Secrets a Switchboard release generates (the cluster secret, the key pepper, the admin
// token) once, with random values, through the Kubernetes API; a Secret that already exists is never
// modified. Run by the chart's hook Job (helm pre-install/pre-upgrade, Argo CD PreSync), so no
// rendered manifest holds a random value and every render of the same values is identical.
//
// Node built-ins only: it runs in whichever Switchboard image the release uses.
//   node create-secrets.mjs <spec.json>
// spec.json: {"secrets": [{"name", "key", "length"}], "labels": {...}}
// In-cluster credentials: KUBERNETES_SERVICE_HOST/PORT, and the service account's token, CA and
// namespace under SERVICE_ACCOUNT_DIR (default /var/run/secrets/kubernetes.io/serviceaccount).
import { Buffer } from 'node:buffer';
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Letters and digits only, so the value is safe in files, env and URLs; randomInt draws uniformly. */
function randomAlphanumeric(length) {
  let value = '';
  for (let i = 0; i < length; i++) value += ALPHABET[randomInt(ALPHABET.length)];
  return value;
}

function readServiceAccount() {
  const dir = process.env.SERVICE_ACCOUNT_DIR || '/var/run/secrets/kubernetes.io/serviceaccount';
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = Number(process.env.KUBERNETES_SERVICE_PORT || 443);
  if (!host) throw new Error('KUBERNETES_SERVICE_HOST is not set: not running in a pod?');
  return {
    host,
    port,
    token: readFileSync(join(dir, 'token'), 'utf8').trim(),
    // The API server's certificate must chain to the cluster CA: the token is sent to it.
    ca: readFileSync(join(dir, 'ca.crt')),
    namespace: readFileSync(join(dir, 'namespace'), 'utf8').trim(),
  };
}

/** One API call; resolves with the status and the parsed JSON body (a Secret or a Status). */
function call(account, method, path, body) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        hostname: account.host,
        port: account.port,
        method,
        path,
        ca: account.ca,
        timeout: 15_000,
        headers: {
          Authorization: `Bearer ${account.token}`,
          Accept: 'application/json',
          ...(payload === undefined
            ? {}
            : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed;
          try {
            parsed = text ? JSON.parse(text) : {};
          } catch {
            parsed = { message: text.slice(0, 200) };
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 15 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

function failure(name, what, response) {
  const reason = response.body?.message ?? `HTTP ${response.status}`;
  return new Error(
    `Secret ${name}: ${what} failed (${response.status} ${response.body?.reason ?? ''}): ${reason}`,
  );
}

/** An existing Secret is left as it is; it must hold the key the pods mount, or they cannot start. */
function checkExisting(spec, secret) {
  if (!secret?.data || !(spec.key in secret.data)) {
    throw new Error(
      `Secret ${spec.name} exists without the key "${spec.key}" the pods read; add that key or delete the Secret (it is never modified here)`,
    );
  }
}

async function ensureSecret(account, spec, labels) {
  const collection = `/api/v1/namespaces/${encodeURIComponent(account.namespace)}/secrets`;
  const path = `${collection}/${encodeURIComponent(spec.name)}`;
  const found = await call(account, 'GET', path);
  if (found.status === 200) {
    checkExisting(spec, found.body);
    return 'exists, left as it is';
  }
  if (found.status !== 404) throw failure(spec.name, 'get', found);

  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: spec.name, labels },
    type: 'Opaque',
    data: { [spec.key]: Buffer.from(randomAlphanumeric(spec.length)).toString('base64') },
  };
  const created = await call(account, 'POST', collection, secret);
  if (created.status === 201) return 'created';
  // Another release's hook (skaffold installs one release per service) created it first: theirs stands.
  if (created.status === 409) {
    const theirs = await call(account, 'GET', path);
    if (theirs.status !== 200) throw failure(spec.name, 'get after a concurrent create', theirs);
    checkExisting(spec, theirs.body);
    return 'created meanwhile by another release, left as it is';
  }
  throw failure(spec.name, 'create', created);
}

async function main() {
  const specFile = process.argv[2];
  if (!specFile) throw new Error('usage: node create-secrets.mjs <spec.json>');
  const { secrets, labels = {} } = JSON.parse(readFileSync(specFile, 'utf8'));
  const account = readServiceAccount();
  for (const spec of secrets) {
    const outcome = await ensureSecret(account, spec, labels);
    // Names and outcomes only: a value is never printed.
    console.log(`Secret ${account.namespace}/${spec.name}: ${outcome}`);
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
