import type { Page } from 'playwright-core';
import { errors as playwrightErrors } from 'playwright-core';
import { SwitchboardError } from '@switchboard/errors';
import { isSelectorSyntaxError } from './page-errors.js';

export type PaperFormat = 'A4' | 'Letter' | 'Legal';
const PAPER_FORMATS: readonly PaperFormat[] = ['A4', 'Letter', 'Legal'];

export interface PrintOptions {
  format: PaperFormat;
  landscape: boolean;
  printBackground: boolean;
}

/** The paper format a request names; empty is A4, anything else unknown is the caller's mistake. */
export function paperFormat(format: string): PaperFormat {
  if (!format) return 'A4';
  const known = PAPER_FORMATS.find((f) => f.toLowerCase() === format.toLowerCase());
  if (!known) {
    throw new SwitchboardError('invalid_request', {
      param: 'format',
      message: `format must be one of ${PAPER_FORMATS.join(', ')}.`,
    });
  }
  return known;
}

/** Chromium's own printing of the page as it is now (print media, the page's own @page rules). */
export async function printPdf(page: Page, options: PrintOptions): Promise<{ pdf: Buffer; pages: number }> {
  const pdf = await page.pdf({
    format: options.format,
    landscape: options.landscape,
    printBackground: options.printBackground,
  });
  return { pdf, pages: countPdfPages(pdf) };
}

/**
 * The page count of a PDF Chromium printed: the largest `/Count` of its page tree (the root's, as
 * nested page-tree nodes count only their own leaves), else its `/Type /Page` objects. Chromium's
 * (Skia's) writer keeps these dictionaries uncompressed, so no PDF parser is needed.
 */
export function countPdfPages(pdf: Buffer): number {
  const text = pdf.toString('latin1');
  let count = 0;
  for (const match of text.matchAll(
    /\/Type\s*\/Pages\b[^>]*?\/Count\s+(\d+)|\/Count\s+(\d+)[^>]*?\/Type\s*\/Pages\b/g,
  )) {
    count = Math.max(count, Number(match[1] ?? match[2]));
  }
  if (count > 0) return count;
  return [...text.matchAll(/\/Type\s*\/Page(?![a-zA-Z])/g)].length;
}

/** Waits for `selector` to be in the page (scrape's `wait_for`); element_not_found after `timeoutMs`. */
export async function waitForSelector(page: Page, selector: string, timeoutMs: number): Promise<void> {
  try {
    await page.waitForSelector(selector, { state: 'attached', timeout: timeoutMs });
  } catch (error) {
    if (error instanceof playwrightErrors.TimeoutError) {
      throw new SwitchboardError('element_not_found', {
        param: 'wait_for',
        message: `No element matches wait_for within ${Math.round(timeoutMs / 1000)} s.`,
        cause: error,
      });
    }
    if (isSelectorSyntaxError(error)) {
      throw new SwitchboardError('invalid_request', {
        param: 'wait_for',
        message: 'wait_for is not a valid selector.',
        cause: error,
      });
    }
    throw error;
  }
}
