import { requestLimits } from '@switchboard/contracts';
import { SwitchboardError } from '@switchboard/errors';

const { min: MIN, max: MAX, defaultWidth, defaultHeight } = requestLimits.viewport;

function side(value: number, fallback: number, param: string): number {
  if (value === 0) return fallback; // proto3: 0 means the field was not sent
  if (!Number.isInteger(value) || value < MIN || value > MAX) {
    throw new SwitchboardError('invalid_request', {
      param,
      message: `${param} must be an integer from ${MIN} to ${MAX}.`,
    });
  }
  return value;
}

/**
 * The viewport of a create request (each side 100–3840, default 1280×720), checked again here:
 * the worker trusts no caller.
 */
export function parseViewport(request: { viewport_width?: number; viewport_height?: number }): {
  width: number;
  height: number;
} {
  return {
    width: side(request.viewport_width ?? 0, defaultWidth, 'viewport_width'),
    height: side(request.viewport_height ?? 0, defaultHeight, 'viewport_height'),
  };
}
