/** Transcript formats: the worker returns segments, the gateway renders them as text, srt, vtt or json. */

export const transcriptFormats = ['text', 'srt', 'vtt', 'json'] as const;
export type TranscriptFormat = (typeof transcriptFormats)[number];

export interface TranscriptSegment {
  start: number;
  end: number;
  text: string;
}

export interface Transcript {
  text: string;
  language: string;
  duration_s: number;
  segments: TranscriptSegment[];
}

export const contentTypes: Record<TranscriptFormat, string> = {
  text: 'text/plain; charset=utf-8',
  srt: 'application/x-subrip; charset=utf-8',
  vtt: 'text/vtt; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

/** HH:MM:SS<sep>mmm, rounding to the millisecond once so the parts always agree. */
export function timestamp(seconds: number, separator: ',' | '.'): string {
  const totalMs = Math.max(0, Math.round(seconds * 1000));
  const ms = totalMs % 1000;
  const totalSeconds = Math.floor(totalMs / 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(Math.floor(totalSeconds / 3600))}:${pad(Math.floor(totalSeconds / 60) % 60)}:${pad(totalSeconds % 60)}${separator}${pad(ms, 3)}`;
}

// A blank line ends a cue in both formats, so text must never contain one.
const oneCueText = (text: string) =>
  text
    .trim()
    .replace(/\r\n?/g, '\n')
    .replace(/\n{2,}/g, '\n');

export function toSrt(segments: readonly TranscriptSegment[]): string {
  return segments
    .map(
      (s, i) => `${i + 1}\n${timestamp(s.start, ',')} --> ${timestamp(s.end, ',')}\n${oneCueText(s.text)}\n`,
    )
    .join('\n');
}

export function toVtt(segments: readonly TranscriptSegment[]): string {
  const cues = segments.map(
    // "-->" inside cue text would be read as a timing line.
    (s) =>
      `${timestamp(s.start, '.')} --> ${timestamp(s.end, '.')}\n${oneCueText(s.text).replaceAll('-->', '->')}\n`,
  );
  return ['WEBVTT\n', ...cues].join('\n');
}

export function render(transcript: Transcript, format: TranscriptFormat): string {
  switch (format) {
    case 'text':
      return transcript.text.trim() + (transcript.text.trim() ? '\n' : '');
    case 'srt':
      return toSrt(transcript.segments);
    case 'vtt':
      return toVtt(transcript.segments);
    case 'json':
      return JSON.stringify({
        text: transcript.text.trim(),
        language: transcript.language,
        duration_s: transcript.duration_s,
        segments: transcript.segments.map(({ start, end, text }) => ({ start, end, text: text.trim() })),
      });
  }
}
