import type { Page } from 'playwright-core';
import { SwitchboardError } from '@switchboard/errors';
import { ELEMENT_WAIT_MS } from '../sessions/page-actions.js';
import {
  type BigField,
  type ExtractParams,
  type ExtractResult,
  type PageLink,
  type PageMetadata,
  extractInIsolatedWorld,
} from './in-page/extract.js';
import { IsolatedWorld } from './isolated-world.js';
import { htmlToMarkdown } from './markdown.js';
import { readabilitySource } from './readability-source.js';
import { capUtf8 } from './utf8.js';

export type { PageLink, PageMetadata } from './in-page/extract.js';

export type ContentFormat = 'html' | 'text' | 'markdown' | 'links' | 'metadata';

export interface ReadPageContentOptions {
  formats: readonly ContentFormat[];
  /** A CSS selector: every format but `metadata` (which describes the document) covers only its subtree. */
  selector?: string;
  /** Keep only the main article (Readability); the whole page with a warning when it finds none. */
  mainContent?: boolean;
  /** The bound on each text format (`html`, `text`, `markdown`) and on `links`, in UTF-8 bytes. */
  maxBytes: number;
  /** How long `selector` may take to match (default: as long as input and submit wait). */
  selectorTimeoutMs?: number;
}

export interface PageContent {
  url: string;
  title: string;
  html?: string;
  text?: string;
  markdown?: string;
  links?: PageLink[];
  metadata?: PageMetadata;
  truncated: boolean;
  warnings: string[];
}

/**
 * How much pruned HTML may leave the page for the Markdown, as a multiple of the bound. Markdown is
 * smaller than its HTML, so more would sometimes give a longer answer; but the converter's DOM in
 * the worker takes about 35 times its input in heap (5 MB of HTML: about 180 MB for a few seconds),
 * and the worker serves many sessions. A page whose source is cut has `truncated: true`.
 */
const MARKDOWN_SOURCE_FACTOR = 1;

/**
 * The page as it is now (after any typing, clicking or scripting) in the requested formats. All
 * reading of the DOM happens in an isolated world, so the page's own scripts can neither falsify
 * nor observe it; each big string is cut to its bound inside the page before it is transferred.
 *
 * Child frames are not inlined in any format: `html` keeps the `<iframe>` element, `markdown` shows
 * a link to the frame's address, `text` and `links` cover the main frame. A frame is another
 * document (often another origin), which a reader of this page's content did not ask for.
 */
export async function readPageContent(page: Page, opts: ReadPageContentOptions): Promise<PageContent> {
  const formats = new Set(opts.formats);
  const params: ExtractParams = {
    html: formats.has('html'),
    text: formats.has('text'),
    links: formats.has('links'),
    metadata: formats.has('metadata'),
    markdownSource: formats.has('markdown'),
    selector: opts.selector ?? null,
    selectorTimeoutMs: opts.selectorTimeoutMs ?? ELEMENT_WAIT_MS,
    mainContent: opts.mainContent ?? false,
    maxBytes: opts.maxBytes,
    markdownSourceMaxBytes: opts.maxBytes * MARKDOWN_SOURCE_FACTOR,
  };
  const extracted = await extract(page, params);
  if (extracted.selectorError) throw selectorError(extracted.selectorError, params.selectorTimeoutMs);

  const truncated = new Set(extracted.truncated);
  const capped = (format: ContentFormat, value: string | undefined): string | undefined => {
    if (value === undefined) return undefined;
    const { value: kept, cut } = capUtf8(value, opts.maxBytes);
    if (cut) truncated.add(format);
    return kept;
  };
  const content: PageContent = { url: extracted.url, title: extracted.title, truncated: false, warnings: [] };
  if (params.html) content.html = capped('html', extracted.html);
  if (params.text) content.text = capped('text', extracted.text);
  if (params.markdownSource)
    content.markdown = capped('markdown', htmlToMarkdown(extracted.markdownSource ?? ''));
  if (params.links) content.links = extracted.links ?? [];
  if (params.metadata && extracted.metadata) content.metadata = extracted.metadata;
  content.truncated = truncated.size > 0;
  content.warnings = extracted.warnings;
  return content;
}

/** Runs the extractor in the isolated world, then copies its answer out one big string at a time. */
async function extract(page: Page, params: ExtractParams): Promise<ExtractResult> {
  const world = await IsolatedWorld.open(page);
  try {
    // Readability is injected only when asked for: ~90 kB of script the world compiles each time.
    const readability = params.mainContent ? readabilitySource() : '';
    const handle = await world.evaluateHandle(
      `(async () => { var module; ${readability}return (${extractInIsolatedWorld.toString()})(${
        params.mainContent ? '{ Readability, isProbablyReaderable }' : 'undefined'
      }, ${JSON.stringify(params)}); })()`,
    );
    const big: BigField[] = ['html', 'text', 'markdownSource'];
    const result = await world.call<ExtractResult>(
      handle,
      'function (big) { const copy = { ...this }; for (const key of big) delete copy[key]; return copy; }',
      big,
    );
    for (const field of big) {
      const value = await world.call<string | undefined>(
        handle,
        'function (key) { return this[key]; }',
        field,
      );
      if (value !== undefined) result[field] = value;
    }
    return result;
  } finally {
    await world.dispose();
  }
}

function selectorError(kind: 'element_not_found' | 'invalid_selector', timeoutMs: number): SwitchboardError {
  return kind === 'element_not_found'
    ? new SwitchboardError('element_not_found', {
        param: 'selector',
        message: `No element matches the selector within ${timeoutMs / 1000} s.`,
      })
    : new SwitchboardError('invalid_request', { param: 'selector', message: 'The selector is not valid.' });
}
