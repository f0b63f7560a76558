/**
 * @switchboard/jobs — animation jobs on NATS JetStream (`/animate`), shared by the gateway and the
 * animation workers.
 *
 *   gateway:  const board = await JobBoard.open(nc, { ackWaitMs, jobRetentionMs, events });
 *             await board.submit({ jobId: newJobId(), ownerKeyId, backend, params, inputs, activeLimit });
 *             await board.get(owner, id); await board.list(owner, { limit }); await board.cancel(owner, id);
 *   worker:   const taker = await JobTaker.open(nc, { ackWaitMs, jobRetentionMs, maxAttempts, events });
 *             const msg = await taker.next('portrait', 5000);      // one pull per free slot
 *             const attempt = msg && (await taker.start(msg));      // null: nothing to run
 *             … attempt.progress(f) … await attempt.succeed(result) | attempt.fail(error, permanent)
 *
 * Stream SWITCHBOARD_ANIMATE (work queue, file storage), a durable pull consumer per back-end
 * (`animation-<backend>`), records in KV keyed `<owner key id>.<job id>`.
 */
export { backendNames, jobNames, type BackendName, type JobNames } from './names.js';
export { newJobId, isJobId } from './ids.js';
export { jobView, type JobView } from './job-view.js';
export {
  jobStatuses,
  isFinished,
  decodeRecord,
  type JobStatus,
  type JobRecord,
  type JobParams,
  type JobInputs,
  type JobResult,
  type JobError,
  type JobMessage,
} from './record.js';
export { JobBoard, type JobBoardOptions, type Submission, type SubmitOutcome } from './board.js';
export type { JobPage, ListOptions } from './records.js';
export { JobTaker, type JobTakerOptions } from './taker.js';
export { JobAttempt, JobCanceledError, type Ending } from './attempt.js';
export type { BackendDescription } from './catalogue.js';
export { jobEnvFields, jobSettings } from './env.js';
