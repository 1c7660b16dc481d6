import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

/** A metric reader the test collects from when it wants (cumulative). */
class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** The OpenTelemetry SDK with in-memory exporters: finished spans, and metrics collected on demand. */
export function inMemorySdk() {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  return {
    tracerProvider,
    meterProvider,
    tracer: tracerProvider.getTracer('test'),
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    /** Sum of a counter's (or count of a histogram's) points, filtered by attributes. */
    async metric(name: string, where: Record<string, unknown> = {}): Promise<number> {
      const { resourceMetrics } = await reader.collect();
      let total = 0;
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const m of scope.metrics) {
          if (m.descriptor.name !== name) continue;
          for (const point of m.dataPoints as DataPoint<number | Histogram>[]) {
            if (!Object.entries(where).every(([k, v]) => point.attributes[k] === v)) continue;
            total += typeof point.value === 'number' ? point.value : point.value.count;
          }
        }
      }
      return total;
    },
    async close() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      context.disable();
      trace.disable();
    },
  };
}

/** The parent span id of a finished span (SDK 2: `parentSpanContext`). */
export const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
