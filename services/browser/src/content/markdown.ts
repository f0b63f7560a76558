import { gfm } from '@joplin/turndown-plugin-gfm';
import TurndownService from 'turndown';

/** The converter's DOM node, as far as read here (its DOM types are the browser's, not loaded here). */
interface ConverterNode {
  readonly nodeName: string;
  readonly firstChild: { readonly nodeName: string } | null;
  readonly textContent: string | null;
}

/** A fence longer than any run of backticks inside the code, so the code cannot close it. */
function fenceFor(code: string): string {
  const longest = Math.max(0, ...Array.from(code.matchAll(/`+/g), (run) => run[0].length));
  return '`'.repeat(Math.max(3, longest + 1));
}

function createConverter(): TurndownService {
  const converter = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '_',
    hr: '---',
  });
  converter.use(gfm);
  // The page's extractor drops these already; kept here so the converter is safe on any HTML.
  converter.remove(['script', 'style', 'template', 'noscript']);
  // Turndown fences only <pre><code>; a bare <pre> is a code block too, not a paragraph.
  converter.addRule('preformatted', {
    filter: (node) => {
      const element = node as unknown as ConverterNode;
      return element.nodeName === 'PRE' && element.firstChild?.nodeName !== 'CODE';
    },
    replacement: (_content, node) => {
      const code = ((node as unknown as ConverterNode).textContent ?? '').replace(/\n$/, '');
      const fence = fenceFor(code);
      return `\n\n${fence}\n${code}\n${fence}\n\n`;
    },
  });
  return converter;
}

let converter: TurndownService | undefined;

/**
 * GitHub-flavoured Markdown of an HTML fragment whose links and images are already absolute:
 * headings, lists, links, tables (GFM pipes; a table holding lists or code blocks stays HTML, which
 * GFM renders), strikethrough, task lists and fenced code blocks.
 */
export function htmlToMarkdown(html: string): string {
  converter ??= createConverter();
  return converter.turndown(html);
}
