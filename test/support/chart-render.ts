import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { chartDir, helm, kubeVersion, type K8sObject, type RenderOptions } from './helm.js';

/**
 * `helm template` like test/support/helm.ts's `helmTemplate`, with two differences the schema test
 * needs: any chart folder (a copy with a planted error), and each object's template file, from the
 * `# Source:` line helm writes above it, so a report names the template to fix and a test can tell
 * which templates a set of renders covered. Hooks and `helm test` pods are rendered, as by default.
 */

export interface SourcedObject {
  /** The template file, relative to the chart: `templates/gateway.yaml`. */
  template: string;
  object: K8sObject;
}

function valuesFlags(options: RenderOptions, dir: string): string[] {
  const flags: string[] = [];
  let files = 0;
  const valuesFile = (values: object) => {
    const file = join(dir, `values-${files++}.json`);
    writeFileSync(file, JSON.stringify(values)); // JSON is YAML
    return file;
  };
  for (const values of options.defaults ?? []) flags.push('-f', valuesFile(values));
  for (const file of options.valuesFiles ?? []) flags.push('-f', file);
  for (const values of options.values ?? []) flags.push('-f', valuesFile(values));
  for (const expression of options.set ?? []) flags.push('--set', expression);
  return flags;
}

/** `helm template`'s raw output for any chart folder; throws with helm's message when it fails. */
export function renderText(options: RenderOptions, chart = chartDir): string {
  const dir = mkdtempSync(join(tmpdir(), 'sb-helm-values-'));
  try {
    const result = helm([
      'template',
      options.releaseName ?? 'sb',
      chart,
      '--namespace',
      options.namespace ?? 'switchboard',
      '--kube-version',
      kubeVersion,
      ...valuesFlags(options, dir),
    ]);
    if (result.status !== 0) throw new Error(`helm template failed (${result.status}):\n${result.stderr}`);
    return result.stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every object a render produces, with its template; throws with helm's message when it fails. */
export function renderWithSources(options: RenderOptions, chart = chartDir): SourcedObject[] {
  return parseSourced(renderText(options, chart));
}

function parseSourced(text: string): SourcedObject[] {
  const objects: SourcedObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0)
      throw new Error(`invalid YAML from helm: ${doc.errors.map((e) => e.message).join('; ')}`);
    const object = doc.toJS() as K8sObject | null;
    if (object === null || object === undefined) continue;
    // The comment sits on the document, or on its first node when nothing separates them.
    const comments = `${doc.commentBefore ?? ''}\n${doc.contents?.commentBefore ?? ''}`;
    const source = /^ ?Source: [^/\n]+\/(\S+)/m.exec(comments);
    objects.push({ template: source?.[1] ?? '(unknown template)', object });
  }
  return objects;
}
