// A job's media, from the object store into the attempt's folder, and away again when the job is
// over: uploads live under animation-inputs/<job id>/ only as long as their job needs them.
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { JobRecord } from '@switchboard/jobs';
import { inputPrefix, type ObjectStore } from '@switchboard/objectstore';
import type { JobInputs } from '../backends/backend.js';

async function download(
  store: ObjectStore,
  key: string,
  target: string,
  signal: AbortSignal,
): Promise<string> {
  const object = await store.get(key);
  // The gateway checked the media when the job was submitted; a missing one was deleted since.
  if (!object) throw new Error(`input ${key.split('/').pop() ?? ''} is no longer stored`);
  await pipeline(object.stream, createWriteStream(target), { signal });
  return target;
}

export async function fetchInputs(
  store: ObjectStore,
  record: JobRecord,
  workDir: string,
  signal: AbortSignal,
): Promise<JobInputs> {
  const { inputs } = record;
  return {
    image: await download(store, inputs.image, join(workDir, 'image'), signal),
    drivingVideo:
      inputs.driving_video === undefined
        ? undefined
        : await download(store, inputs.driving_video, join(workDir, 'driving_video'), signal),
    audio:
      inputs.audio === undefined
        ? undefined
        : await download(store, inputs.audio, join(workDir, 'audio'), signal),
  };
}

/** Removes the job's own uploads (never a referenced image or video of the caller's). */
export async function removeUploads(store: ObjectStore, record: JobRecord): Promise<void> {
  const own = Object.values(record.inputs).filter(
    (key): key is string => typeof key === 'string' && key.startsWith(inputPrefix(record.job_id)),
  );
  await Promise.all(own.map((key) => store.delete(key)));
}
