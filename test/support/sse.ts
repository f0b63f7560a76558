/** One Server-Sent Events response, read to the end: its `data:` payloads in order, and the raw text. */
export interface SseResult {
  status: number;
  contentType: string;
  raw: string;
  data: string[];
}

export async function readSse(res: Response): Promise<SseResult> {
  const raw = await res.text();
  // Events end with a blank line; comments (": ping") carry no data.
  const data = raw
    .split('\n\n')
    .filter((event) => event.trim() !== '')
    .flatMap((event) =>
      event
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length)),
    );
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', raw, data };
}
