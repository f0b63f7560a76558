import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { deploymentOf, envNames, k8sProblems, secretFiles, workerNames } from '../support/helm-checks.js';
import { helmTemplate, helmTemplateFailure } from '../support/helm.js';
import { brokerCredentials } from '../support/render-matrix.js';

/**
 * S3 through each pod's own identity (s3.webIdentity): no key reaches any pod, S3 is on for every
 * component that stores files, and the token the services exchange is either EKS's (its webhook
 * injects it) or one the chart projects itself.
 */

const everyComponent = Object.fromEntries(['gateway', ...workerNames].map((c) => [c, { enabled: true }]));
const objectStoreUsers = ['gateway', 'diffusion', 'animation', 'browser'];
const render = (...values: object[]) =>
  helmTemplate({ defaults: [brokerCredentials], values: [everyComponent, ...values] });
const failure = (...values: object[]) =>
  helmTemplateFailure({ defaults: [brokerCredentials], values: [everyComponent, ...values] });

const envOf = (objects: ReturnType<typeof render>, component: string) => {
  const container = deploymentOf(objects, component)!.spec.template.spec.containers[0]!;
  return Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));
};

describe('chart: S3 through the pods’ identity (s3.webIdentity)', () => {
  test('on EKS: S3 on for every component that stores files, web-identity credentials, no keys, no token volume', () => {
    const objects = render({
      s3: {
        endpoint: 'https://s3.eu-west-1.amazonaws.com',
        region: 'eu-west-1',
        webIdentity: { enabled: true },
      },
      gateway: {
        serviceAccount: {
          create: true,
          annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/sb' },
        },
      },
    });
    assert.deepEqual(objects.flatMap(k8sProblems), []);
    for (const component of objectStoreUsers) {
      const env = envOf(objects, component);
      assert.equal(env.S3_ENDPOINT, 'https://s3.eu-west-1.amazonaws.com', component);
      assert.equal(env.S3_REGION, 'eu-west-1', component);
      assert.equal(env.S3_CREDENTIALS, 'web-identity', component);
      assert.equal(env.OBJECT_STORE_DIR, undefined, component);
      assert.equal(
        env.AWS_WEB_IDENTITY_TOKEN_FILE,
        undefined,
        `${component}: EKS's webhook injects the token`,
      );
      const pod = deploymentOf(objects, component)!.spec.template.spec;
      const container = pod.containers[0]!;
      assert.deepEqual(
        Object.keys(secretFiles(pod, container)).filter((name) => name.startsWith('S3_')),
        [],
        component,
      );
      assert.ok(!(pod.volumes ?? []).some((v) => v.name === 's3-token'), component);
    }
    for (const component of ['llm', 'whisper']) {
      assert.ok(
        !envNames(deploymentOf(objects, component)!.spec.template.spec.containers[0]!).some((n) =>
          n.startsWith('S3_'),
        ),
      );
    }
  });

  test('with another STS (MinIO): the chart projects a token of the given audience and names its file', () => {
    const objects = render({
      s3: {
        webIdentity: {
          enabled: true,
          stsEndpoint: 'http://minio:9000',
          tokenAudience: 'switchboard-minio',
          tokenExpirationSeconds: 1800,
        },
      },
    });
    assert.deepEqual(objects.flatMap(k8sProblems), []);
    for (const component of objectStoreUsers) {
      const env = envOf(objects, component);
      assert.equal(env.S3_STS_ENDPOINT, 'http://minio:9000');
      assert.equal(env.AWS_WEB_IDENTITY_TOKEN_FILE, '/var/run/secrets/switchboard-s3/token');
      const pod = deploymentOf(objects, component)!.spec.template.spec;
      const volume = (pod.volumes ?? []).find((v) => v.name === 's3-token') as
        { projected: { sources: { serviceAccountToken: object }[] } } | undefined;
      assert.deepEqual(volume?.projected.sources, [
        { serviceAccountToken: { audience: 'switchboard-minio', expirationSeconds: 1800, path: 'token' } },
      ]);
      assert.ok(
        pod.containers[0]!.volumeMounts!.some(
          (m) => m.name === 's3-token' && m.mountPath === '/var/run/secrets/switchboard-s3' && m.readOnly,
        ),
      );
    }
    assert.ok(
      !(deploymentOf(objects, 'llm')!.spec.template.spec.volumes ?? []).some((v) => v.name === 's3-token'),
    );
  });

  test('refuses keys beside it, and a model sync (its MinIO client needs keys)', () => {
    assert.match(
      failure({ s3: { existingSecret: 'sb-s3', webIdentity: { enabled: true } } }),
      /s3.webIdentity: the pods' identity replaces S3 keys/,
    );
    assert.match(
      failure({
        s3: { webIdentity: { enabled: true } },
        models: { sync: { enabled: true, image: { tag: 'RELEASE.2025-01-01T00-00-00Z' } } },
      }),
      /models.sync: llm copies its models with the MinIO client, which needs keys/,
    );
    assert.match(failure({ s3: { webIdentity: { enabled: true, tokenExpirationSeconds: 60 } } }), /600/);
  });
});
