import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { errorCodes, httpStatusOf, type ErrorCode } from '@switchboard/errors';
import type { Operation } from './requests.js';
import type { FuzzAnswer, FuzzRequest } from './send.js';

// What every answer must be, from the served document and the one error table: a declared
// status, an error body of the Error schema whose code has that status and is one the operation
// lists, and a 2xx body that matches the operation's response schema.

const documentId = 'urn:switchboard:openapi';

/**
 * 5xx answers the contract allows in this stack, by code, and why. `navigation_failed`: a browser
 * route given a URL of an allowed host that does not serve (the host is real, its page is not)
 * answers 502, which is the upstream's failure, not the gateway's.
 */
export const allowedServerErrors: Readonly<Record<string, readonly ErrorCode[]>> = {
  '502': ['navigation_failed'],
};

export class AnswerChecks {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  private readonly compiled = new Map<object, ValidateFunction>();

  constructor(document: Record<string, unknown>) {
    addFormats.default(this.ajv);
    this.ajv.addSchema({ $id: documentId, components: rebase(document.components) });
  }

  /** Everything wrong with `answer` to `request` for `op`; empty when it is what the contract says. */
  problems(op: Operation, request: FuzzRequest, answer: FuzzAnswer): string[] {
    const problems: string[] = [];
    const status = String(answer.status);
    const type = String(answer.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    const declared = op.responses[status] ?? op.responses['default'];
    if (!declared) problems.push(`status ${status} is not declared for ${op.method} ${op.template}`);
    if (answer.status < 400) {
      if (answer.status >= 200 && answer.status < 300 && declared)
        problems.push(...this.success(declared, type, answer));
      return problems;
    }
    const body = parse(answer.body);
    const error = (body as { error?: { code?: unknown; request_id?: unknown } } | undefined)?.error;
    const code = error?.code as ErrorCode | undefined;
    if (type !== 'application/json' || !error)
      return [...problems, `error ${status} is not a JSON error body (${type}): ${preview(answer.body)}`];
    if (!errorCodes.includes(code!)) problems.push(`error code ${String(code)} is not in the error table`);
    else if (httpStatusOf(code!) !== answer.status)
      problems.push(`${code} is ${httpStatusOf(code!)} in the error table, answered ${status}`);
    if (answer.status >= 500 && !allowedServerErrors[status]?.includes(code!))
      problems.push(`server error ${status} ${String(code)}: ${preview(answer.body)}`);
    const listed = declared?.['x-error-codes'] as string[] | undefined;
    if (listed && !listed.includes(code!))
      problems.push(`${String(code)} is not among the codes documented for ${status}: ${listed.join(', ')}`);
    if (error.request_id !== answer.headers['x-request-id'])
      problems.push('error request_id differs from X-Request-Id');
    if (declared) problems.push(...this.schema(declared, 'application/json', body));
    return problems;
  }

  private success(declared: Record<string, unknown>, type: string, answer: FuzzAnswer): string[] {
    const content = declared.content as Record<string, unknown> | undefined;
    if (!content || answer.status === 204) return [];
    // A declared media type may carry parameters (`text/html; charset=utf-8`) or be a range (`audio/*`).
    const media = Object.keys(content).find((declaredType) => {
      const m = declaredType.split(';')[0]!.trim();
      return m === type || (m.endsWith('/*') && type.startsWith(m.slice(0, -1)));
    });
    if (!media) return [`content type ${type} is not declared (${Object.keys(content).join(', ')})`];
    return media === 'application/json' ? this.schema(declared, media, parse(answer.body)) : [];
  }

  private schema(declared: Record<string, unknown>, media: string, body: unknown): string[] {
    const schema = (declared.content as Record<string, { schema?: object }> | undefined)?.[media]?.schema;
    if (!schema) return [];
    const validate = this.compiled.get(schema) ?? this.ajv.compile(rebase(schema) as object);
    this.compiled.set(schema, validate);
    return validate(body)
      ? []
      : [
          `body does not match its schema: ${this.ajv.errorsText(validate.errors)}: ${JSON.stringify(body).slice(0, 300)}`,
        ];
  }
}

/** The document's local `#/components/…` references, pointed at the schema registered above. */
function rebase(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value).replaceAll('"#/components/', `"${documentId}#/components/`));
}

function parse(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

export const preview = (body: Buffer) => body.toString('utf8').slice(0, 300);
