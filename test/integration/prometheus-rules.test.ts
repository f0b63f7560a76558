import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { ofKind } from '../support/helm-checks.js';
import { helmTemplate, type K8sObject } from '../support/helm.js';
import {
  alertMeasuredQueries,
  alertRules,
  alertsFile,
  alertTestsFile,
  dashboardFile,
  dashboardQueries,
  everyWorkerWithKeda,
  kedaQueries,
  measuredExpression,
  ruleGroups,
  topLevelComparison,
  type ShippedQuery,
} from '../support/observability-queries.js';
import { brokerCredentials } from '../support/render-matrix.js';

/**
 * The chart's alerting rules, Grafana dashboard and KEDA queries, checked offline: promtool (from
 * Debian's prometheus package, which the set-up installs) validates the rule file and runs its unit
 * tests, which fire every alert on synthetic failures and keep it silent on healthy series; every
 * query the chart ships parses as PromQL; each alert has the form and annotations an on-call
 * engineer and the live Prometheus test rely on; and the PrometheusRule the chart renders carries
 * exactly the groups promtool checked.
 */

const promtoolFound = spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0;
const needsPromtool = {
  skip: !promtoolFound && 'promtool not found: install Debian’s prometheus package (npm run setup does)',
};

function promtool(args: string[], cwd?: string) {
  const result = spawnSync('promtool', args, { encoding: 'utf8', cwd });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('alert rules with promtool', needsPromtool, () => {
  test('promtool check rules accepts alerts.yaml', () => {
    const { status, output } = promtool(['check', 'rules', alertsFile]);
    assert.equal(status, 0, output);
    assert.match(output, new RegExp(`SUCCESS: ${ruleGroups().flatMap((g) => g.rules).length} rules found`));
  });

  test('promtool test rules: every alert fires on its failure and stays silent on healthy series', () => {
    const { status, output } = promtool(['test', 'rules', alertTestsFile], dirname(alertTestsFile));
    assert.equal(status, 0, output);
    assert.match(output, /SUCCESS/);
  });

  test('the unit tests make every alert fire at least once, and test a cluster where none fires', () => {
    interface AlertTest {
      alertname: string;
      exp_alerts: unknown[];
    }
    const tests = (
      parse(readFileSync(alertTestsFile, 'utf8')) as { tests: { alert_rule_test?: AlertTest[] }[] }
    ).tests;
    const checks = tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const { alert } of alertRules()) {
      assert.ok(
        checks.some((c) => c.alertname === alert && c.exp_alerts.length > 0),
        `${alert}: no unit test in alerts.test.yaml expects it to fire`,
      );
      assert.ok(
        checks.some((c) => c.alertname === alert && c.exp_alerts.length === 0),
        `${alert}: no unit test in alerts.test.yaml expects it to stay silent`,
      );
    }
  });

  test('every query the chart ships parses as PromQL', () => {
    const queries: ShippedQuery[] = [
      ...dashboardQueries(),
      ...alertMeasuredQueries(),
      ...kedaQueries('switchboard'),
    ];
    // One recording rule per query: promtool check rules parses each expression, naming the bad ones.
    const dir = mkdtempSync(join(tmpdir(), 'sb-promql-'));
    try {
      const file = join(dir, 'queries.json');
      const rules = queries.map((q, i) => ({ record: `shipped:query_${i}`, expr: q.query }));
      writeFileSync(file, JSON.stringify({ groups: [{ name: 'shipped', rules }] }));
      const { status, output } = promtool(['check', 'rules', file]);
      const named = output.replace(
        /query_(\d+)/g,
        (_, i: string) => `query_${i} (${queries[Number(i)]!.source})`,
      );
      assert.equal(status, 0, named);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('alerts.yaml', () => {
  test('every alert has for, a severity, and summary, description and runbook annotations', () => {
    const alerts = alertRules();
    assert.ok(alerts.length >= 10, `only ${alerts.length} alerts`);
    for (const rule of alerts) {
      assert.match(rule.for ?? '', /^\d+[smh]$/, `${rule.alert}: for`);
      assert.ok(['warning', 'critical'].includes(rule.labels?.severity ?? ''), `${rule.alert}: severity`);
      for (const key of ['summary', 'description', 'runbook']) {
        assert.ok((rule.annotations?.[key] ?? '').trim().length > 10, `${rule.alert}: annotation ${key}`);
      }
      assert.ok(!rule.annotations!.runbook!.trim().includes('\n'), `${rule.alert}: the runbook is one line`);
    }
  });

  test('every alert is <measured expression> <comparison> <threshold>, aggregated by namespace, without absent()', () => {
    for (const rule of alertRules()) {
      const expr = rule.expr.replace(/\s+/g, ' ').trim();
      const { at, op } = topLevelComparison(expr);
      assert.ok(at > 0, `${rule.alert}: no top-level comparison in ${expr}`);
      assert.match(
        expr.slice(at + op.length).trim(),
        /^\d+(\.\d+)?$/,
        `${rule.alert}: threshold is a number`,
      );
      assert.doesNotMatch(
        expr,
        /\babsent(_over_time)?\(/,
        `${rule.alert}: absent() never returns a measurement`,
      );
      assert.match(expr, /by \([^)]*\bnamespace\b/, `${rule.alert}: aggregated by namespace`);
      assert.doesNotMatch(expr, /\b(job|instance)\s*[=!]/, `${rule.alert}: depends on the scrape job`);
      // Prometheus's own alert templates pass through Helm untouched; Helm's would not reach it.
      assert.doesNotMatch(JSON.stringify(rule), /\{\{-|\.Values|\.Release/, `${rule.alert}: Helm syntax`);
    }
  });

  test('measuredExpression turns the outermost comparison into a bool one', () => {
    assert.equal(measuredExpression('max by (pod) (x{a=~"b"}) > 3'), 'max by (pod) (x{a=~"b"}) > bool 3');
    assert.equal(measuredExpression('sum(a) / sum(b{c!="d"}) >= 1'), 'sum(a) / sum(b{c!="d"}) >= bool 1');
    assert.equal(measuredExpression('max(x == 1) == 0'), 'max(x == 1) == bool 0');
    assert.throws(() => measuredExpression('sum(rate(x[5m]))'), /no top-level comparison/);
  });
});

interface PrometheusRuleObject extends K8sObject {
  spec: { groups: unknown[] };
}

describe('PrometheusRule, dashboard and KEDA queries in the chart', () => {
  test('the rendered PrometheusRule carries exactly the groups of alerts.yaml, with its additional labels', () => {
    const objects = helmTemplate({
      values: [
        brokerCredentials,
        {
          metrics: {
            prometheusRule: { enabled: true, additionalLabels: { release: 'kube-prometheus-stack' } },
          },
        },
      ],
    });
    const [rule, ...more] = ofKind<PrometheusRuleObject>(objects, 'PrometheusRule');
    assert.ok(rule, 'no PrometheusRule rendered');
    assert.equal(more.length, 0);
    assert.equal(rule.metadata.labels?.release, 'kube-prometheus-stack');
    assert.deepEqual(rule.spec.groups, ruleGroups());
  });

  test('no PrometheusRule or dashboard unless asked for', () => {
    const objects = helmTemplate({ values: [brokerCredentials, everyWorkerWithKeda] });
    for (const kind of ['PrometheusRule', 'ServiceMonitor', 'PodMonitor'])
      assert.equal(ofKind(objects, kind).length, 0, kind);
    assert.ok(!ofKind(objects, 'ConfigMap').some((c) => c.metadata.name.endsWith('-dashboard')));
  });

  test('the dashboard reads its datasource and namespace from template variables, with a row per area', () => {
    interface Dashboard {
      templating: { list: { name: string; type: string; query?: unknown }[] };
      panels: { type: string; title: string; datasource?: { uid?: string }; targets?: { expr: string }[] }[];
    }
    const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as Dashboard;
    const variable = (name: string) => dashboard.templating.list.find((v) => v.name === name);
    assert.equal(variable('datasource')?.type, 'datasource');
    assert.equal(variable('namespace')?.type, 'query');
    assert.match(JSON.stringify(variable('namespace')?.query), /label_values\([^)]+, namespace\)/);
    const rows = dashboard.panels.filter((p) => p.type === 'row').map((p) => p.title);
    assert.deepEqual(rows, [
      'Traffic',
      'LLM',
      'Whisper',
      'Diffusion',
      'Animation jobs',
      'Browser',
      'Infrastructure',
    ]);
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
      assert.equal(panel.datasource?.uid, '${datasource}', `${panel.title}: datasource`);
      assert.ok((panel.targets ?? []).length > 0, `${panel.title}: no query`);
      for (const { expr } of panel.targets ?? []) {
        // Every selector of every query is scoped to the namespaces picked.
        const selectors = expr.match(/\{[^}]*\}/g) ?? [];
        assert.ok(selectors.length > 0, `${panel.title}: ${expr}`);
        for (const selector of selectors)
          assert.ok(selector.includes('namespace=~"$namespace"'), `${panel.title}: ${selector} in ${expr}`);
        assert.doesNotMatch(expr, /\b(job|instance)\s*[=!]/, `${panel.title}: depends on the scrape job`);
      }
    }
  });

  test('every KEDA Prometheus query selects only the release namespace’s series', () => {
    const queries = kedaQueries('media');
    assert.deepEqual(queries.map((q) => q.source).sort(), [
      'keda: ScaledObject/sb-switchboard-browser',
      'keda: ScaledObject/sb-switchboard-diffusion',
      'keda: ScaledObject/sb-switchboard-llm',
      'keda: ScaledObject/sb-switchboard-webhooks',
      'keda: ScaledObject/sb-switchboard-whisper',
    ]);
    for (const { source, query } of queries) {
      const selectors = query.match(/\{[^}]*\}/g) ?? [];
      assert.ok(selectors.length > 0, `${source}: ${query}`);
      for (const selector of selectors)
        assert.match(selector, /^\{namespace="media",/, `${source}: ${query}`);
    }
  });
});
