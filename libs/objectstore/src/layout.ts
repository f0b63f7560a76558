// Where each kind of stored file lives in the object store: the one place that builds those keys
// (for the workers that write them) and parses the file names in public URLs back into keys (for
// the gateway that serves and references them). A name that does not parse is not a stored file.
import { randomUUID } from 'node:crypto';

/** Key prefix of browser screenshots (kept 7 days by default, after their session ends). */
export const SCREENSHOTS_PREFIX = 'screenshots/';

const IMAGE_FILE = /^img-[A-Za-z0-9-]{1,64}\.png$/;
const VIDEO_FILE = /^job-[A-Za-z0-9-]{1,64}\.(mp4|jpg)$/;
const CAPTURE_FILE = /^capture-\d{13,20}\.png$/;
const PDF_FILE = /^page-\d{13,20}\.pdf$/;

/** A fresh generated-image id (`img-<uuid>`). */
export const newImageId = (): string => `img-${randomUUID()}`;

/** A generated image: `images/<image id>.png` (served as /api/images/<image id>.png). */
export const imageKey = (imageId: string): string => `images/${imageId}.png`;

/** A job's MP4: `videos/<job id>.mp4` (served as /api/videos/<job id>.mp4). */
export const videoKey = (jobId: string): string => `videos/${jobId}.mp4`;

/** A job's poster frame: `videos/<job id>.jpg` (served as /api/videos/<job id>.jpg). */
export const posterKey = (jobId: string): string => `videos/${jobId}.jpg`;

/** The file name of a screenshot taken at `unixMs` (unique per session: callers never reuse a time). */
export const captureFileName = (unixMs: number): string => `capture-${unixMs}.png`;

/** The file name of a PDF printed at `unixMs` (unique per session, as capture names are). */
export const pdfFileName = (unixMs: number): string => `page-${unixMs}.pdf`;

/**
 * A session's PDF: `screenshots/<session id>/<pdf file name>`. Beside its screenshots, so one
 * retention rule (and one owner check) covers every file a session leaves behind.
 */
export const pdfKey = (sessionId: string, file: string): string =>
  `${SCREENSHOTS_PREFIX}${sessionId}/${file}`;

/** A session's screenshot: `screenshots/<session id>/<capture file name>`. */
export const screenshotKey = (sessionId: string, file: string): string =>
  `${SCREENSHOTS_PREFIX}${sessionId}/${file}`;

/** The media fields an animation job can upload. */
export type AnimationInputField = 'image' | 'driving_video' | 'audio';

/** Where the gateway stores a job's uploaded media: `animation-inputs/<job id>/<field>`. */
export const inputKey = (jobId: string, field: AnimationInputField): string =>
  `${inputPrefix(jobId)}${field}`;

/** The prefix of every upload of one job. */
export const inputPrefix = (jobId: string): string => `animation-inputs/${jobId}/`;

/**
 * The key of a served image file name (`img-….png`), or null when the name is not one. Names
 * arrive percent-decoded, so `../` or `..` simply fail the anchored pattern.
 */
export function imageKeyOfFile(file: string): string | null {
  return IMAGE_FILE.test(file) ? `images/${file}` : null;
}

/** The key of a served video file name (`job-….mp4` or its poster `job-….jpg`), or null. */
export function videoKeyOfFile(file: string): { key: string; poster: boolean } | null {
  const match = VIDEO_FILE.exec(file);
  return match ? { key: `videos/${file}`, poster: match[1] === 'jpg' } : null;
}

/** The key of a served screenshot file name (`capture-<unix ms>.png`) of a session, or null. */
export function screenshotKeyOfFile(sessionId: string, file: string): string | null {
  return CAPTURE_FILE.test(file) ? screenshotKey(sessionId, file) : null;
}

/** The key of a served PDF file name (`page-<unix ms>.pdf`) of a session, or null. */
export function pdfKeyOfFile(sessionId: string, file: string): string | null {
  return PDF_FILE.test(file) ? pdfKey(sessionId, file) : null;
}
