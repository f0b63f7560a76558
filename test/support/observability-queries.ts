import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { workerNames } from './helm-checks.js';
import { chartDir, helmTemplate, type K8sObject } from './helm.js';
import { brokerCredentials } from './render-matrix.js';

/**
 * Every PromQL query the chart ships, read from the chart's own files and render, for tests that
 * ask a real Prometheus whether each returns data: the Grafana dashboard's panel queries, each
 * alert's measured expression, and the KEDA Prometheus triggers.
 */

export interface ShippedQuery {
  /** Where the query comes from, readable in a failure: `dashboard: LLM / Time to first token`. */
  source: string;
  /** Ready-to-run PromQL (Grafana variables already substituted). */
  query: string;
}

export const alertsFile = join(chartDir, 'files', 'prometheus', 'alerts.yaml');
export const alertTestsFile = join(chartDir, 'files', 'prometheus', 'alerts.test.yaml');
export const dashboardFile = join(chartDir, 'files', 'grafana', 'switchboard.json');

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface RuleGroup {
  name: string;
  rules: (AlertRule | { record: string; expr: string })[];
}

export function ruleGroups(): RuleGroup[] {
  return (parse(readFileSync(alertsFile, 'utf8')) as { groups: RuleGroup[] }).groups;
}

export function alertRules(): AlertRule[] {
  return ruleGroups().flatMap((group) => group.rules.filter((rule): rule is AlertRule => 'alert' in rule));
}

/**
 * The dashboard's variables as the test Prometheus sees them: a rate window that holds several
 * scrapes, and every namespace.
 */
export function substituteGrafanaVariables(expr: string): string {
  return expr
    .replaceAll('$__rate_interval', '1m')
    .replaceAll('${__rate_interval}', '1m')
    .replace(/\$\{?[A-Za-z_]\w*\}?/g, '.*');
}

interface Panel {
  type?: string;
  title?: string;
  panels?: Panel[];
  targets?: { expr?: string; refId?: string }[];
}

/** Every query of every panel of the dashboard (collapsed rows' panels included). */
export function dashboardQueries(): ShippedQuery[] {
  const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as { panels: Panel[] };
  const queries: ShippedQuery[] = [];
  let row = '';
  const visit = (panel: Panel) => {
    if (panel.type === 'row') row = panel.title ?? '';
    for (const target of panel.targets ?? []) {
      if (!target.expr) continue;
      queries.push({
        source: `dashboard: ${row} / ${panel.title ?? '(untitled)'} [${target.refId ?? '?'}]`,
        query: substituteGrafanaVariables(target.expr),
      });
    }
    for (const inner of panel.panels ?? []) visit(inner);
  };
  for (const panel of dashboard.panels) visit(panel);
  return queries;
}

const comparisons = ['==', '!=', '>=', '<=', '>', '<'];

/**
 * Where an expression's top-level comparison is: outside every bracket, brace and string, the
 * last one (PromQL comparisons are left-associative, so that is the outermost). -1 when none.
 */
export function topLevelComparison(expr: string): { at: number; op: string } {
  let depth = 0;
  let quote: string | undefined;
  let found = { at: -1, op: '' };
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') quote = c;
    else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    else if (depth === 0) {
      const op = comparisons.find((candidate) => expr.startsWith(candidate, i));
      // `=~` and `!~` only occur inside braces; `=` alone is no comparison.
      if (op) {
        found = { at: i, op };
        i += op.length - 1;
      }
    }
  }
  return found;
}

/**
 * An alert's expression with its top-level comparison made a `bool` one: it then returns every
 * series it measures (0 or 1), so a query without data means a metric or label that is missing.
 */
export function measuredExpression(expr: string): string {
  const { at, op } = topLevelComparison(expr);
  if (at < 0) throw new Error(`alert expression has no top-level comparison: ${expr}`);
  return `${expr.slice(0, at).trimEnd()} ${op} bool ${expr.slice(at + op.length).trimStart()}`;
}

export function alertMeasuredQueries(): ShippedQuery[] {
  return alertRules().map((rule) => ({
    source: `alert: ${rule.alert}`,
    query: measuredExpression(rule.expr.replace(/\s+/g, ' ').trim()),
  }));
}

interface ScaledObject extends K8sObject {
  spec: { triggers: { type: string; name?: string; metadata: Record<string, string> }[] };
}

/** Values that turn on every worker and KEDA, as the KEDA queries are rendered for. */
export const everyWorkerWithKeda = {
  ...brokerCredentials,
  keda: { enabled: true },
  ...Object.fromEntries(workerNames.map((worker) => [worker, { enabled: true }])),
};

/** The query of every KEDA Prometheus trigger, rendered into `namespace` with every worker on. */
export function kedaQueries(namespace: string): ShippedQuery[] {
  const objects = helmTemplate({ namespace, values: [everyWorkerWithKeda] });
  return objects
    .filter((o): o is ScaledObject => o.kind === 'ScaledObject')
    .flatMap((o) =>
      o.spec.triggers
        .filter((trigger) => trigger.type === 'prometheus')
        .map((trigger) => ({
          source: `keda: ScaledObject/${o.metadata.name}`,
          query: trigger.metadata.query!,
        })),
    );
}
