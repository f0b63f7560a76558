import type { ContentResponse } from '@switchboard/contracts';
import { SwitchboardError } from '@switchboard/errors';
import type { ContentFormat, PageContent } from '../content/page-content.js';

const FORMATS: readonly ContentFormat[] = ['html', 'text', 'markdown', 'links', 'metadata'];

/** The formats a content call asks for; none means Markdown, an unknown one is the caller's mistake. */
export function contentFormats(requested: readonly string[]): ContentFormat[] {
  if (requested.length === 0) return ['markdown'];
  return requested.map((format) => {
    const known = FORMATS.find((f) => f === format);
    if (!known) {
      throw new SwitchboardError('invalid_request', {
        param: 'formats',
        message: `Unknown format ${JSON.stringify(format).slice(0, 60)}; use ${FORMATS.join(', ')}.`,
      });
    }
    return known;
  });
}

/**
 * The page's content as the RPC carries it: proto3 strings cannot be null, so absent metadata
 * fields travel as empty strings (the gateway answers them as null) and formats not asked for stay
 * empty (the gateway answers only the ones it asked for).
 */
export function contentResponse(sessionId: string, content: PageContent): ContentResponse {
  const metadata = content.metadata;
  return {
    session_id: sessionId,
    url: content.url,
    title: content.title,
    html: content.html ?? '',
    text: content.text ?? '',
    markdown: content.markdown ?? '',
    links: content.links ?? [],
    ...(metadata
      ? {
          metadata: {
            title: metadata.title,
            description: metadata.description ?? '',
            lang: metadata.lang ?? '',
            canonical_url: metadata.canonical_url ?? '',
            og: metadata.og,
          },
        }
      : {}),
    truncated: content.truncated,
    warnings: content.warnings,
  };
}
