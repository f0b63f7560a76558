import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { renderWithSources, type SourcedObject } from '../support/chart-render.js';
import { chartDir, type K8sObject } from '../support/helm.js';
import { objectId, objectViolations, type Violation } from '../support/k8s-schemas.js';
import { renderMatrix, type MatrixEntry } from '../support/render-matrix.js';

/**
 * Every object deploy/helm/switchboard renders — hooks and `helm test` pods included — over the
 * render matrix (chart defaults, each values file, each skaffold module under each profile), checked
 * offline against Kubernetes' OpenAPI schemas and KEDA's CRD schemas, unknown fields included; and
 * planted errors, in objects and in a template, that the check must report with their paths.
 */

const matrix = renderMatrix();
const renders = new Map<string, SourcedObject[]>();
/** Each set of options is rendered once (a profile that changes nothing shares its render). */
function rendered(entry: MatrixEntry): SourcedObject[] {
  const key = JSON.stringify(entry.options);
  let objects = renders.get(key);
  if (!objects) {
    objects = renderWithSources(entry.options);
    renders.set(key, objects);
  }
  return objects;
}
const entryNamed = (name: string) => {
  const entry = matrix.find((e) => e.name === name);
  assert.ok(entry, `no matrix entry ${name}`);
  return entry;
};

/** One line per violation: where it was rendered, from which template, the object and the path. */
function report(entryName: string, objects: SourcedObject[]): string[] {
  const lines: string[] = [];
  for (const { template, object } of objects) {
    for (const v of objectViolations(object)) {
      lines.push(`${entryName}: ${template}: ${objectId(object)}: ${v.path} ${v.message}`);
    }
  }
  return lines;
}

describe('every rendered object validates against the Kubernetes and KEDA schemas', () => {
  for (const entry of matrix) {
    test(entry.name, () => {
      const objects = rendered(entry);
      assert.ok(objects.length > 0, 'the render has objects');
      assert.deepEqual(report(entry.name, objects), []);
    });
  }

  test('the matrix covers every template of the chart that declares an object', () => {
    // Subfolders too: `helm test` pods live in templates/tests/.
    const templates = readdirSync(join(chartDir, 'templates'), { recursive: true, encoding: 'utf8' })
      .filter((file) => /\.ya?ml$/.test(file))
      .filter((file) => /^\s*kind:/m.test(readFileSync(join(chartDir, 'templates', file), 'utf8')))
      .map((file) => `templates/${file}`);
    const covered = new Set(matrix.flatMap((entry) => rendered(entry).map((o) => o.template)));
    assert.deepEqual(
      templates.filter((t) => !covered.has(t)),
      [],
      'templates no matrix entry renders, so no schema checks them: turn them on in test/support/render-matrix.ts',
    );
  });
});

describe('the schema check reports planted errors with their paths', () => {
  const objectOf = (entryName: string, kind: string): K8sObject => {
    const found = rendered(entryNamed(entryName)).find((o) => o.object.kind === kind);
    assert.ok(found, `${entryName} renders a ${kind}`);
    return structuredClone(found.object);
  };
  const deployment = () => objectOf('chart defaults, every worker enabled', 'Deployment');
  type Pod = { containers: Record<string, unknown>[] };
  const podOf = (d: K8sObject) => (d.spec as { template: { spec: Pod } }).template.spec;
  const check = (object: K8sObject) => objectViolations(object);
  const expect = (violations: Violation[], path: string, message: RegExp) =>
    assert.ok(
      violations.some((v) => v.path === path && message.test(v.message)),
      `expected ${path} ${String(message)} in ${JSON.stringify(violations)}`,
    );

  test('the objects planted into are valid as rendered', () => {
    assert.deepEqual(check(deployment()), []);
    assert.deepEqual(check(objectOf('chart defaults, every optional object on', 'ScaledObject')), []);
  });

  test('an unknown field in a container', () => {
    const d = deployment();
    podOf(d).containers[0]!.imagePullPolicyy = 'Always';
    const violations = check(d);
    expect(violations, 'spec.template.spec.containers[0].imagePullPolicyy', /not a field/);
    assert.equal(violations.length, 1, JSON.stringify(violations));
  });

  test('unknown fields at the top, in metadata and in a selector', () => {
    const d = deployment();
    d.specs = {};
    (d.metadata as Record<string, unknown>).label = { a: 'b' };
    (d.spec as { selector: Record<string, unknown> }).selector.matchLabel = { a: 'b' };
    const violations = check(d);
    expect(violations, 'specs', /not a field/);
    expect(violations, 'metadata.label', /not a field/);
    expect(violations, 'spec.selector.matchLabel', /not a field/);
  });

  test('a wrong type', () => {
    const d = deployment();
    (d.spec as Record<string, unknown>).replicas = 'two';
    expect(check(d), 'spec.replicas', /must be integer/);
  });

  test('a missing required field', () => {
    const d = deployment();
    delete podOf(d).containers[0]!.name;
    expect(check(d), 'spec.template.spec.containers[0].name', /required/);
  });

  test('an unknown field in a KEDA trigger', () => {
    const scaledObject = objectOf('chart defaults, every optional object on', 'ScaledObject');
    const [trigger] = (scaledObject.spec as { triggers: Record<string, unknown>[] }).triggers;
    trigger!.metadataa = { stream: 'jobs' };
    expect(check(scaledObject), 'spec.triggers[0].metadataa', /not a field/);
  });

  test('a label value, a label key and a Service name the API server rejects', () => {
    const d = deployment();
    d.metadata.labels = { ...d.metadata.labels, 'app.kubernetes.io/instance': 'x'.repeat(64) };
    (d.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels[
      'example.com/bad key'
    ] = 'a';
    const violations = check(d);
    expect(violations, 'metadata.labels["app.kubernetes.io/instance"]', /label value/);
    expect(violations, 'spec.template.metadata.labels["example.com/bad key"]', /qualified name/);
    const service = objectOf('chart defaults, every worker enabled', 'Service');
    service.metadata.name = '1-switchboard';
    expect(check(service), 'metadata.name', /DNS label/);
  });

  test('a kind without a schema, and a beta built-in API', () => {
    expect(
      check({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }),
      'kind',
      /no schema for example.com\/v1 Widget/,
    );
    const beta = { ...deployment(), apiVersion: 'apps/v1beta2' };
    expect(check(beta), 'apiVersion', /not a GA/);
  });

  describe('an unknown field planted in a template', () => {
    const copy = mkdtempSync(join(tmpdir(), 'sb-chart-'));
    after(() => rmSync(copy, { recursive: true, force: true }));

    test('is reported for every Deployment the template renders, naming the template', () => {
      const chart = join(copy, 'switchboard');
      cpSync(chartDir, chart, { recursive: true });
      const template = join(chart, 'templates', 'workers.yaml');
      const lines = readFileSync(template, 'utf8').split('\n');
      // The worker pod's containers list: a misspelt schedulerName goes right above it.
      const at = lines.findIndex((line) => /^\s+containers:\s*$/.test(line));
      assert.ok(at >= 0, "workers.yaml has the worker pod's containers");
      const indent = /^\s+/.exec(lines[at]!)![0];
      lines.splice(at, 0, `${indent}schedulerNames: [default-scheduler]`);
      writeFileSync(template, lines.join('\n'));

      const entry = entryNamed('chart defaults, every worker enabled');
      // Only what the planted line adds: the chart's own state is the matrix test's business.
      const unplanted = report(entry.name, rendered(entry));
      const planted = report(entry.name, renderWithSources(entry.options, chart)).filter(
        (line) => !unplanted.includes(line),
      );
      const workers = rendered(entry).filter(
        (o) => o.object.kind === 'Deployment' && o.template === 'templates/workers.yaml',
      );
      assert.ok(workers.length > 0);
      assert.deepEqual(
        planted,
        workers.map(
          ({ object }) =>
            `${entry.name}: templates/workers.yaml: ${objectId(object)}: ` +
            `spec.template.spec.schedulerNames is not a field of the schema`,
        ),
      );
    });
  });
});
