import { errors as playwrightErrors } from 'playwright-core';
import { SwitchboardError } from '@switchboard/errors';

/**
 * A selector that could not even be parsed is the caller's mistake, not a missing element.
 * Playwright throws one error class for everything, so the parsers' own wording is the only
 * signal: its selector parser ("Unexpected token" / "Unsupported token" … "while parsing css
 * selector", "Unknown engine") and Chromium's, for what Playwright hands on (querySelectorAll's
 * "is not a valid selector", document.evaluate's "is not a valid XPath expression").
 */
const selectorSyntax =
  /while parsing (css )?selector|Unexpected token|Unsupported token|Unknown engine|Failed to parse selector|is not a valid (selector|XPath expression)/i;

export function isSelectorSyntaxError(error: unknown): boolean {
  return error instanceof Error && selectorSyntax.test(error.message);
}

/** input/submit: an element that never matched within the wait → element_not_found. */
export function elementError(error: unknown, selector: string): SwitchboardError {
  if (error instanceof SwitchboardError) return error;
  if (error instanceof playwrightErrors.TimeoutError) {
    return new SwitchboardError('element_not_found', {
      param: 'selector',
      message: `No element matches the selector within 5 s.`,
      cause: error,
    });
  }
  if (isSelectorSyntaxError(error)) {
    return new SwitchboardError('invalid_request', {
      param: 'selector',
      message: 'The selector is not valid.',
      cause: error,
    });
  }
  if (
    error instanceof Error &&
    /not an <input>|not an? (input|textarea|select)|contenteditable/i.test(error.message)
  ) {
    return new SwitchboardError('invalid_request', {
      param: 'selector',
      message: `The element matching the selector cannot take text: ${selector.slice(0, 100)}`,
      cause: error,
    });
  }
  return new SwitchboardError('internal', { cause: error });
}

/** A navigation that failed to load: DNS, refused, reset, timeout → 502 navigation_failed. */
export function navigationFailed(error: unknown): SwitchboardError {
  if (error instanceof SwitchboardError) return error;
  const detail =
    error instanceof playwrightErrors.TimeoutError
      ? 'The page did not finish loading in time.'
      : `The page could not be loaded (${netErrorName(error) ?? 'navigation error'}).`;
  return new SwitchboardError('navigation_failed', { message: detail, cause: error });
}

/** `net::ERR_CONNECTION_REFUSED` from a Playwright navigation error; never the URL or host. */
export function netErrorName(error: unknown): string | undefined {
  return error instanceof Error ? /net::ERR_[A-Z_]+/.exec(error.message)?.[0] : undefined;
}
