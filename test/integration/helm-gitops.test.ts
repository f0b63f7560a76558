import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ofKind } from '../support/helm-checks.js';
import { chartDir, helmNotes, helmTemplate, parseManifests, type K8sObject } from '../support/helm.js';
import { renderText } from '../support/chart-render.js';
import { brokerCredentials, renderMatrix } from '../support/render-matrix.js';

/**
 * Renders GitOps can use. `helm template`, Argo CD and `skaffold render` render without a cluster,
 * so nothing rendered may be random: two renders of the same values are byte-identical, no Secret
 * is rendered at all, and the generated Secrets (cluster secret, key pepper, admin token) are
 * created once, in the cluster, by the chart's hook Job running files/create-secrets.mjs. That
 * script is tested here against a fake Kubernetes API server speaking the real wire protocol over
 * HTTPS (paths, Bearer token, Secret and Status bodies, 201/404/409/403), with real certificates.
 */

const script = join(chartDir, 'files', 'create-secrets.mjs');
const annotationsOf = (o: K8sObject) =>
  (o.metadata as { annotations?: Record<string, string> }).annotations ?? {};

interface GeneratedSecret {
  name: string;
  key: string;
  length: number;
}
function hookOf(objects: K8sObject[]) {
  const job = ofKind(objects, 'Job').find((j) => annotationsOf(j)['helm.sh/hook']);
  const named = (kind: string) => ofKind(objects, kind).find((o) => o.metadata.name === job?.metadata.name);
  const configMap = named('ConfigMap') as { data?: Record<string, string> } | undefined;
  const spec = configMap?.data?.['secrets.json'];
  return {
    job,
    configMap,
    role: named('Role') as
      { rules?: { resources: string[]; verbs: string[]; resourceNames?: string[] }[] } | undefined,
    roleBinding: named('RoleBinding'),
    serviceAccount: named('ServiceAccount'),
    networkPolicy: named('NetworkPolicy'),
    secrets: spec ? (JSON.parse(spec) as { secrets: GeneratedSecret[] }).secrets : [],
  };
}

describe('helm: renders GitOps can apply', () => {
  const matrix = renderMatrix();

  test('no template draws random data, reads the cluster or the clock', () => {
    const templates = readdirSync(join(chartDir, 'templates'), { recursive: true, encoding: 'utf8' });
    for (const name of templates.filter((t) => /\.(ya?ml|tpl|txt)$/.test(t))) {
      // The template actions only, their comments left out: prose may say "now" or "lookup".
      const actions = (
        readFileSync(join(chartDir, 'templates', name), 'utf8').match(/\{\{[\s\S]*?\}\}/g) ?? []
      )
        .map((action) => action.replace(/\/\*[\s\S]*?\*\//g, ''))
        .join('\n');
      assert.doesNotMatch(
        actions,
        /\b(lookup|randAlphaNum|randAlpha|randNumeric|randAscii|randBytes|randInt|uuidv4|now|genPrivateKey|genCA|genSelfSignedCert|genSignedCert)\b/,
        name,
      );
    }
  });

  test('a planted random value makes two renders differ (the check below can fail)', () => {
    const copy = mkdtempSync(join(tmpdir(), 'sb-planted-chart-'));
    try {
      cpSync(chartDir, copy, { recursive: true });
      writeFileSync(
        join(copy, 'templates', 'planted.yaml'),
        'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: planted }\ndata: { value: {{ randAlphaNum 16 | quote }} }\n',
      );
      const options = { defaults: [brokerCredentials] };
      assert.notEqual(renderText(options, copy), renderText(options, copy));
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  for (const entry of matrix) {
    test(`${entry.name}: two renders are byte-identical; no Secret is rendered`, () => {
      const first = renderText(entry.options);
      assert.equal(renderText(entry.options), first);
      assert.deepEqual(
        ofKind(parseManifests(first), 'Secret').map((s) => s.metadata.name),
        [],
        'generated Secrets are created in the cluster, never rendered',
      );
    });
  }

  test('the generated Secrets are exactly the ones pods read that no existingSecret names', () => {
    for (const entry of matrix) {
      const objects = helmTemplate(entry.options);
      const { secrets } = hookOf(objects);
      const referenced = new Set<string>();
      for (const d of ofKind(objects, 'Deployment')) {
        const pod = (
          d.spec as {
            template: { spec: { volumes?: { projected?: { sources: { secret?: { name: string } }[] } }[] } };
          }
        ).template.spec;
        for (const v of pod.volumes ?? [])
          for (const s of v.projected?.sources ?? []) if (s.secret) referenced.add(s.secret.name);
      }
      for (const s of secrets) assert.ok(referenced.has(s.name), `${entry.name}: ${s.name} is read by a pod`);
      const generatedNames = /-(cluster-secret|key-pepper|admin-token)$/;
      for (const name of referenced) {
        if (generatedNames.test(name))
          assert.ok(
            secrets.some((s) => s.name === name),
            `${entry.name}: ${name} is created`,
          );
      }
    }
  });
});

describe('helm: the hook Job that creates the generated Secrets', () => {
  const defaults = { defaults: [brokerCredentials] };
  const objects = helmTemplate(defaults);
  const hook = hookOf(objects);

  test('creates the cluster secret, key pepper, admin token and webhook secrets key of a gateway release, with their lengths', () => {
    assert.deepEqual(hook.secrets, [
      { name: 'sb-switchboard-cluster-secret', key: 'secret', length: 48 },
      { name: 'sb-switchboard-key-pepper', key: 'pepper', length: 64 },
      { name: 'sb-switchboard-admin-token', key: 'token', length: 48 },
      { name: 'sb-switchboard-webhook-secrets-key', key: 'key', length: 64 },
    ]);
  });

  test('a pre-install/pre-upgrade hook (Argo CD: PreSync), its RBAC and script before it, removed once it succeeds', () => {
    for (const o of [
      hook.serviceAccount,
      hook.role,
      hook.roleBinding,
      hook.configMap,
      hook.networkPolicy,
      hook.job,
    ]) {
      assert.ok(o, 'rendered');
      const a = annotationsOf(o as K8sObject);
      assert.equal(a['helm.sh/hook'], 'pre-install,pre-upgrade');
      assert.equal(a['helm.sh/hook-delete-policy'], 'before-hook-creation,hook-succeeded');
      assert.ok(
        Number(a['helm.sh/hook-weight']) < Number(annotationsOf(hook.job!)['helm.sh/hook-weight']) ||
          o === hook.job,
      );
    }
  });

  test('least privilege: create Secrets, read only the generated names; nothing else', () => {
    assert.deepEqual(hook.role?.rules, [
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      {
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: hook.secrets.map((s) => s.name),
        verbs: ['get'],
      },
    ]);
    const binding = hook.roleBinding as unknown as {
      roleRef: { name: string };
      subjects: { name: string; namespace: string }[];
    };
    assert.equal(binding.roleRef.name, hook.role && (hook.role as unknown as K8sObject).metadata.name);
    assert.deepEqual(
      binding.subjects.map((s) => [s.name, s.namespace]),
      [[hook.serviceAccount!.metadata.name, 'switchboard']],
    );
  });

  test("runs the chart's own script with node from the release's image: non-root, read-only, bounded", () => {
    const job = hook.job as unknown as {
      spec: { template: { spec: Record<string, unknown> & { containers: Record<string, unknown>[] } } };
    };
    const pod = job.spec.template.spec;
    const [container] = pod.containers;
    assert.equal(pod.serviceAccountName, hook.serviceAccount!.metadata.name);
    assert.equal(pod.automountServiceAccountToken, true);
    assert.equal(pod.restartPolicy, 'Never');
    assert.deepEqual((pod.securityContext as Record<string, unknown>).runAsNonRoot, true);
    const security = container!.securityContext as Record<string, unknown>;
    assert.equal(security.readOnlyRootFilesystem, true);
    assert.equal(security.allowPrivilegeEscalation, false);
    assert.deepEqual(security.capabilities, { drop: ['ALL'] });
    assert.ok((container!.resources as { limits?: { memory?: string } }).limits?.memory);
    const gateway = ofKind(objects, 'Deployment').find((d) => d.metadata.name === 'sb-switchboard-gateway')!;
    const gatewayImage = (gateway.spec as { template: { spec: { containers: { image: string }[] } } })
      .template.spec.containers[0]!.image;
    assert.equal(container!.image, gatewayImage, "the gateway's image: the release pulls it anyway");
    assert.deepEqual(container!.command, [
      'node',
      '/opt/switchboard-secrets/create-secrets.mjs',
      '/opt/switchboard-secrets/secrets.json',
    ]);
    assert.equal(
      hook.configMap?.data?.['create-secrets.mjs'],
      readFileSync(script, 'utf8').replace(/\n$/, ''),
    );
  });

  test('with NetworkPolicies on, it may reach the API server (apiServerEgress) and nothing else', () => {
    const policy = hook.networkPolicy as unknown as {
      spec: { policyTypes: string[]; ingress: unknown[]; egress: unknown[] };
    };
    assert.deepEqual(policy.spec.policyTypes, ['Ingress', 'Egress']);
    assert.deepEqual(policy.spec.ingress, []);
    assert.deepEqual(policy.spec.egress, [
      {
        ports: [
          { port: 443, protocol: 'TCP' },
          { port: 6443, protocol: 'TCP' },
        ],
      },
    ]);
    const narrowed = hookOf(
      helmTemplate({
        ...defaults,
        values: [
          {
            secretsJob: {
              apiServerEgress: [
                { to: [{ ipBlock: { cidr: '192.0.2.10/32' } }], ports: [{ port: 6443, protocol: 'TCP' }] },
              ],
            },
          },
        ],
      }),
    );
    assert.deepEqual((narrowed.networkPolicy as unknown as { spec: { egress: unknown[] } }).spec.egress, [
      { to: [{ ipBlock: { cidr: '192.0.2.10/32' } }], ports: [{ port: 6443, protocol: 'TCP' }] },
    ]);
    const off = hookOf(helmTemplate({ ...defaults, values: [{ networkPolicies: { enabled: false } }] }));
    assert.ok(off.job && !off.networkPolicy);
  });

  test('a release of workers only creates the shared cluster secret alone; existingSecrets leave nothing to create', () => {
    const workerObjects = helmTemplate({
      ...defaults,
      values: [{ gateway: { enabled: false }, llm: { enabled: true } }],
    });
    const workers = hookOf(workerObjects);
    assert.deepEqual(
      workers.secrets.map((s) => s.name),
      ['sb-switchboard-cluster-secret'],
    );
    const imageOf = (o: K8sObject | undefined) =>
      (o?.spec as { template: { spec: { containers: { image: string }[] } } } | undefined)?.template.spec
        .containers[0]!.image;
    assert.ok(imageOf(workers.job));
    assert.equal(
      imageOf(workers.job),
      imageOf(ofKind(workerObjects, 'Deployment').find((d) => d.metadata.name === 'sb-switchboard-llm')),
      "the llm worker's image",
    );
    const external = helmTemplate({
      ...defaults,
      values: [
        {
          llm: { enabled: true },
          clusterAuth: { existingSecret: 'sealed-cluster' },
          keyPepper: { existingSecret: 'sealed-pepper' },
          adminToken: { existingSecret: 'sealed-admin' },
          webhookSecretsKey: { existingSecret: 'sealed-webhook-key' },
        },
      ],
    });
    assert.equal(hookOf(external).job, undefined);
    assert.deepEqual(
      external.filter((o) => annotationsOf(o)['helm.sh/hook']?.includes('pre-install')),
      [],
    );
  });

  test('NOTES.txt says how the Secrets are made, and how to rotate or bring your own', () => {
    const notes = helmNotes(defaults);
    assert.match(
      notes,
      /Generated Secrets \(sb-switchboard-cluster-secret, sb-switchboard-key-pepper, sb-switchboard-admin-token, sb-switchboard-webhook-secrets-key\): the hook Job sb-secrets/,
    );
    assert.match(notes, /never changes or deletes one/);
    assert.match(notes, /Rotate by deleting a Secret and upgrading/);
    assert.match(notes, /existingSecret/);
  });
});

// ─── files/create-secrets.mjs against a fake Kubernetes API server ────────────────────────────────

interface Pki {
  dir: string;
  caCert: string;
  serverKey: string;
  serverCert: string;
  otherCaCert: string;
}

function openssl(dir: string, args: string[]): void {
  const result = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  assert.equal(result.status, 0, `openssl ${args.join(' ')}: ${result.stderr}`);
}

/** A cluster CA, an API server certificate for 127.0.0.1 signed by it, and an unrelated CA. */
function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'sb-fake-apiserver-'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  for (const ca of ['ca', 'other-ca']) {
    openssl(dir, [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      `${ca}.key`,
      '-out',
      `${ca}.crt`,
      '-days',
      '2',
      '-subj',
      `/CN=${ca}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign',
    ]);
  }
  openssl(dir, ['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=kube-apiserver']);
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.crt',
    '-days',
    '2',
    '-extfile',
    'ext.cnf',
  ]);
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return {
    dir,
    caCert: read('ca.crt'),
    serverKey: read('server.key'),
    serverCert: read('server.crt'),
    otherCaCert: read('other-ca.crt'),
  };
}

interface StoredSecret {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; namespace: string; labels?: Record<string, string>; resourceVersion: string };
  type?: string;
  data?: Record<string, string>;
}

/** The Secrets API of one namespace, as kube-apiserver answers it (v1 Secret and Status bodies). */
class FakeApiServer {
  readonly secrets = new Map<string, StoredSecret>();
  readonly requests: { method: string; path: string; authorization?: string }[] = [];
  /** Names whose create is forbidden (403), as RBAC would answer. */
  readonly forbidden = new Set<string>();
  /** Names another client creates between our GET and our POST (then our POST gets 409). */
  readonly racedBy = new Map<string, StoredSecret>();
  private server: Server | undefined;
  private version = 1;

  constructor(
    private readonly pki: Pki,
    readonly namespace: string,
    readonly token: string,
  ) {}

  async start(): Promise<number> {
    this.server = createServer({ key: this.pki.serverKey, cert: this.pki.serverCert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const { status, body } = this.handle(
          req.method ?? '',
          req.url ?? '',
          req.headers.authorization,
          Buffer.concat(chunks).toString('utf8'),
        );
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  private status(code: number, reason: string, message: string, name?: string) {
    return {
      status: code,
      body: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message,
        reason,
        details: name ? { name, kind: 'secrets' } : {},
        code,
      },
    };
  }

  private handle(
    method: string,
    url: string,
    authorization: string | undefined,
    text: string,
  ): { status: number; body: unknown } {
    this.requests.push({ method, path: url, authorization });
    if (authorization !== `Bearer ${this.token}`) return this.status(401, 'Unauthorized', 'Unauthorized');
    const collection = `/api/v1/namespaces/${this.namespace}/secrets`;
    if (method === 'GET' && url.startsWith(`${collection}/`)) {
      const name = decodeURIComponent(url.slice(collection.length + 1));
      const secret = this.secrets.get(name);
      return secret
        ? { status: 200, body: secret }
        : this.status(404, 'NotFound', `secrets "${name}" not found`, name);
    }
    if (method === 'POST' && url === collection) {
      const secret = JSON.parse(text) as StoredSecret;
      const name = secret.metadata.name;
      if (this.forbidden.has(name)) {
        return this.status(
          403,
          'Forbidden',
          `secrets is forbidden: User "system:serviceaccount:${this.namespace}:sb-secrets" cannot create resource "secrets" in API group "" in the namespace "${this.namespace}"`,
          name,
        );
      }
      const raced = this.racedBy.get(name);
      if (raced) this.secrets.set(name, raced);
      if (this.secrets.has(name))
        return this.status(409, 'AlreadyExists', `secrets "${name}" already exists`, name);
      const stored: StoredSecret = {
        ...secret,
        metadata: { ...secret.metadata, namespace: this.namespace, resourceVersion: String(this.version++) },
      };
      this.secrets.set(name, stored);
      return { status: 201, body: stored };
    }
    return this.status(404, 'NotFound', 'the server could not find the requested resource');
  }
}

describe('files/create-secrets.mjs against a Kubernetes API server', () => {
  let pki: Pki;
  let api: FakeApiServer;
  let port: number;
  const namespace = 'switchboard';
  const token = 'eyJhbGciOiJSUzI1NiJ9.service-account-token';
  const specs: GeneratedSecret[] = [
    { name: 'sb-switchboard-cluster-secret', key: 'secret', length: 48 },
    { name: 'sb-switchboard-key-pepper', key: 'pepper', length: 64 },
  ];

  before(async () => {
    pki = makePki();
    api = new FakeApiServer(pki, namespace, token);
    port = await api.start();
  });
  after(async () => {
    await api.stop();
    rmSync(pki.dir, { recursive: true, force: true });
  });

  /** Runs the script as the Job runs it, with a service account folder of its own. */
  async function run(options: { ca?: string; secrets?: GeneratedSecret[] } = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'sb-service-account-'));
    try {
      writeFileSync(join(dir, 'token'), `${token}\n`);
      writeFileSync(join(dir, 'ca.crt'), options.ca ?? pki.caCert);
      writeFileSync(join(dir, 'namespace'), namespace);
      writeFileSync(
        join(dir, 'secrets.json'),
        JSON.stringify({
          secrets: options.secrets ?? specs,
          labels: { 'app.kubernetes.io/part-of': 'switchboard' },
        }),
      );
      const child = spawn(process.execPath, [script, join(dir, 'secrets.json')], {
        env: {
          PATH: process.env.PATH ?? '',
          KUBERNETES_SERVICE_HOST: '127.0.0.1',
          KUBERNETES_SERVICE_PORT: String(port),
          SERVICE_ACCOUNT_DIR: dir,
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const status = await new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 1)));
      return { status, stdout, stderr };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const value = (name: string, key: string) =>
    Buffer.from(api.secrets.get(name)?.data?.[key] ?? '', 'base64').toString('utf8');

  test('creates each missing Secret once, with a random alphanumeric value of its length', async () => {
    api.secrets.clear();
    const first = await run();
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /Secret switchboard\/sb-switchboard-cluster-secret: created/);
    assert.match(value('sb-switchboard-cluster-secret', 'secret'), /^[A-Za-z0-9]{48}$/);
    assert.match(value('sb-switchboard-key-pepper', 'pepper'), /^[A-Za-z0-9]{64}$/);
    assert.notEqual(
      value('sb-switchboard-cluster-secret', 'secret').slice(0, 32),
      value('sb-switchboard-key-pepper', 'pepper').slice(0, 32),
    );
    const created = api.secrets.get('sb-switchboard-cluster-secret')!;
    assert.equal(created.type, 'Opaque');
    assert.deepEqual(created.metadata.labels, { 'app.kubernetes.io/part-of': 'switchboard' });
    assert.ok(
      api.requests.every((r) => r.authorization === `Bearer ${token}`),
      'the service account token on every call',
    );
    assert.ok(
      !first.stdout.includes(value('sb-switchboard-cluster-secret', 'secret')),
      'values are never printed',
    );
  });

  test('an upgrade or a second release leaves existing Secrets exactly as they are', async () => {
    const before = structuredClone([...api.secrets.values()]);
    api.requests.length = 0;
    const again = await run();
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stdout, /sb-switchboard-key-pepper: exists, left as it is/);
    assert.deepEqual([...api.secrets.values()], before);
    assert.deepEqual(
      api.requests.map((r) => r.method),
      ['GET', 'GET'],
      'read only: no create, no update',
    );
  });

  test('a Secret created meanwhile by another release (409 AlreadyExists) is theirs, and success', async () => {
    api.secrets.clear();
    const theirs: StoredSecret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'sb-switchboard-cluster-secret', namespace, resourceVersion: '99' },
      data: { secret: Buffer.from('x'.repeat(48)).toString('base64') },
    };
    api.racedBy.set('sb-switchboard-cluster-secret', theirs);
    try {
      const result = await run();
      assert.equal(result.status, 0, result.stderr);
      assert.match(
        result.stdout,
        /sb-switchboard-cluster-secret: created meanwhile by another release, left as it is/,
      );
      assert.equal(value('sb-switchboard-cluster-secret', 'secret'), 'x'.repeat(48));
    } finally {
      api.racedBy.clear();
    }
  });

  test('a Secret without the key the pods read, or a 403 from RBAC, fails the Job with the reason', async () => {
    api.secrets.clear();
    api.secrets.set('sb-switchboard-cluster-secret', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'sb-switchboard-cluster-secret', namespace, resourceVersion: '7' },
      data: { other: 'eA==' },
    });
    const missingKey = await run();
    assert.equal(missingKey.status, 1);
    assert.match(missingKey.stderr, /sb-switchboard-cluster-secret exists without the key "secret"/);
    assert.deepEqual(
      api.secrets.get('sb-switchboard-cluster-secret')!.data,
      { other: 'eA==' },
      'not modified',
    );

    api.secrets.clear();
    api.forbidden.add('sb-switchboard-key-pepper');
    try {
      const forbidden = await run();
      assert.equal(forbidden.status, 1);
      assert.match(
        forbidden.stderr,
        /Secret sb-switchboard-key-pepper: create failed \(403 Forbidden\): secrets is forbidden/,
      );
    } finally {
      api.forbidden.clear();
    }
  });

  test('an API server whose certificate the cluster CA did not sign gets no request (and no token)', async () => {
    api.requests.length = 0;
    const result = await run({ ca: pki.otherCaCert });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /certificate/i);
    assert.deepEqual(api.requests, []);
  });
});
