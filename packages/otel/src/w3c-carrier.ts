import { type Context, ROOT_CONTEXT, type SpanContext, TraceFlags, createTraceState, isSpanContextValid, trace } from '@opentelemetry/api';

// version-traceid-spanid-flags, lower-case hex (W3C Trace Context, level 1).
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The W3C carrier (`traceparent`, `tracestate`) of the span active in `ctx`, or undefined when
 * none is. Written here rather than through the global propagator, so it works whether or not
 * the application registered one.
 */
export function toCarrier(ctx: Context): Record<string, string> | undefined {
  const span = trace.getSpanContext(ctx);
  if (span === undefined || !isSpanContextValid(span)) return undefined;
  const carrier: Record<string, string> = { traceparent: `00-${span.traceId}-${span.spanId}-0${(span.traceFlags & TraceFlags.SAMPLED).toString(16)}` };
  const state = span.traceState?.serialize();
  if (state) carrier['tracestate'] = state;
  return carrier;
}

/** A context whose remote parent is the carrier's span; the root context when the carrier holds none. */
export function fromCarrier(carrier: Record<string, string> | undefined): Context {
  const match = carrier?.['traceparent'] === undefined ? null : TRACEPARENT.exec(carrier['traceparent']);
  if (!match) return ROOT_CONTEXT;
  const spanContext: SpanContext = {
    traceId: match[1] as string,
    spanId: match[2] as string,
    traceFlags: Number.parseInt(match[3] as string, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  };
  if (carrier?.['tracestate']) spanContext.traceState = createTraceState(carrier['tracestate']);
  return isSpanContextValid(spanContext) ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : ROOT_CONTEXT;
}
