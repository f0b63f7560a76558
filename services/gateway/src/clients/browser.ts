import {
  Browser,
  type BrowserClient as GrpcBrowser,
  type CaptureResponse__Output,
  type CreateSessionRequest,
  type InputRequest,
  type InputResponse__Output,
  type NavigateRequest,
  type NavigateResponse__Output,
  type Session__Output,
  type SubmitRequest,
  type SubmitResponse__Output,
} from '@switchboard/contracts';
import { callMetadata, createClient, unary } from '@switchboard/grpc';
import type { Logger } from '@switchboard/telemetry';
import type { CallContext } from './call-context.js';
import type { WorkerEndpoint } from './worker-endpoint.js';

export type Session = Session__Output;

/** The gateway's one door to the browser worker. */
export class BrowserClient {
  readonly grpc: GrpcBrowser;

  constructor(endpoint: WorkerEndpoint, logger: Logger) {
    this.grpc = createClient(Browser, endpoint.address, { deadlineMs: endpoint.deadlineMs, logger });
  }

  create(request: CreateSessionRequest, ctx: CallContext): Promise<Session> {
    return unary(this.grpc.CreateSession.bind(this.grpc), request, callMetadata(ctx));
  }

  navigate(request: NavigateRequest, ctx: CallContext): Promise<NavigateResponse__Output> {
    return unary(this.grpc.Navigate.bind(this.grpc), request, callMetadata(ctx));
  }

  input(request: InputRequest, ctx: CallContext): Promise<InputResponse__Output> {
    return unary(this.grpc.Input.bind(this.grpc), request, callMetadata(ctx));
  }

  submit(request: SubmitRequest, ctx: CallContext): Promise<SubmitResponse__Output> {
    return unary(this.grpc.Submit.bind(this.grpc), request, callMetadata(ctx));
  }

  capture(sessionId: string, ctx: CallContext): Promise<CaptureResponse__Output> {
    return unary(this.grpc.Capture.bind(this.grpc), { session_id: sessionId }, callMetadata(ctx));
  }

  details(sessionId: string, ctx: CallContext): Promise<Session> {
    return unary(this.grpc.GetDetails.bind(this.grpc), { session_id: sessionId }, callMetadata(ctx));
  }

  close(sessionId: string, ctx: CallContext): Promise<Session> {
    return unary(this.grpc.CloseSession.bind(this.grpc), { session_id: sessionId }, callMetadata(ctx));
  }

  async listSessions(ctx: CallContext): Promise<Session[]> {
    const list = await unary(this.grpc.ListSessions.bind(this.grpc), {}, callMetadata(ctx), {
      deadline: Date.now() + 2000,
    });
    return list.sessions;
  }
}
