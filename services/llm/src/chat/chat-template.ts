// A model's own chat template (tokenizer_config.json `chat_template`), rendered with
// @huggingface/jinja — the renderer Transformers.js uses — given the variables its
// apply_chat_template gives: the messages, add_generation_prompt, tools/documents (none here) and
// the tokenizer's special tokens (bos_token, eos_token, …), so a template that writes
// `{{ bos_token }}` itself gets the model's BOS text. The template is the operator's code; the
// messages are the caller's data, handed to it as values and never parsed as template text.
import { Template } from '@huggingface/jinja';
import { SwitchboardError } from '@switchboard/errors';

export interface ChatTurn {
  readonly role: string;
  readonly content: string;
}

/** The tokenizer config entries Transformers.js passes to a chat template, under these names. */
const SPECIAL_TOKEN_KEYS = [
  'bos_token',
  'eos_token',
  'unk_token',
  'sep_token',
  'pad_token',
  'cls_token',
  'mask_token',
] as const;

type TokenizerConfig = Readonly<Record<string, unknown>>;

export class ChatTemplate {
  private constructor(
    /** The parsed template, or why it cannot be used (the model then takes no chats). */
    private readonly compiled: Template | { readonly unusable: string },
    private readonly specialTokens: Readonly<Record<string, string>>,
  ) {}

  /**
   * The chat template of a tokenizer config, or undefined when it has none. A template that is
   * there but cannot be used (wrong shape, not parseable) still loads the model — plain
   * completions do not need it — and makes every chat answer why.
   */
  static fromTokenizerConfig(config: TokenizerConfig): ChatTemplate | undefined {
    const source = pickTemplate(config['chat_template']);
    if (source === undefined) return undefined;
    const specialTokens = specialTokensOf(config);
    if (typeof source !== 'string') return new ChatTemplate(source, specialTokens);
    try {
      return new ChatTemplate(new Template(source), specialTokens);
    } catch (error) {
      return new ChatTemplate({ unusable: `it does not parse (${(error as Error).message})` }, specialTokens);
    }
  }

  /** The prompt text for `messages`, ending with the template's generation prompt. */
  render(messages: readonly ChatTurn[]): string {
    const { compiled } = this;
    if (!(compiled instanceof Template)) {
      throw new SwitchboardError('invalid_request', {
        param: 'model',
        message: `The model's chat template cannot be used: ${compiled.unusable}.`,
      });
    }
    try {
      return compiled.render({
        // Fresh plain objects: the template sees exactly role and content, nothing else.
        messages: messages.map(({ role, content }) => ({ role, content })),
        add_generation_prompt: true,
        tools: null,
        documents: null,
        ...this.specialTokens,
      });
    } catch (error) {
      // Templates refuse conversations they cannot express (raise_exception: roles that must
      // alternate, no system role, …); the caller can change the messages.
      throw new SwitchboardError('invalid_request', {
        param: 'messages',
        message: `The model's chat template cannot render these messages: ${(error as Error).message}`,
        cause: error,
      });
    }
  }
}

/**
 * The template text: a string, or from the list-of-named-templates form the one named "default"
 * (the one a plain chat uses). Undefined = no template; an object = why the entry is unusable.
 * An empty string is no template, as Transformers.js reads it.
 */
function pickTemplate(value: unknown): string | { readonly unusable: string } | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return { unusable: 'chat_template is neither a string nor a list' };
  let named: string | undefined;
  for (const entry of value as unknown[]) {
    const { name, template } = (entry ?? {}) as { name?: unknown; template?: unknown };
    if (typeof name !== 'string' || typeof template !== 'string') {
      return { unusable: 'a chat_template list entry is not {name, template}' };
    }
    if (name === 'default') named = template;
  }
  return named ?? { unusable: 'its chat_template list has no template named "default"' };
}

/** Special tokens as text: a plain string, or the content of a serialized AddedToken. */
function specialTokensOf(config: TokenizerConfig): Record<string, string> {
  const tokens: Record<string, string> = {};
  for (const key of SPECIAL_TOKEN_KEYS) {
    const value = config[key];
    const text =
      typeof value === 'string'
        ? value
        : typeof value === 'object' &&
            value !== null &&
            typeof (value as { content?: unknown }).content === 'string'
          ? (value as { content: string }).content
          : undefined;
    if (text) tokens[key] = text;
  }
  return tokens;
}
