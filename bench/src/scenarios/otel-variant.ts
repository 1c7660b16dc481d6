import { cairnTelemetry } from '@cairn/otel';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { ObservabilityVariant } from './observability.js';

// Spans are built, ended and handed to an exporter that drops them: the cost of tracing without the network.
const dropping: SpanExporter = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };

/** `@cairn/otel` on a real SDK: a span per execution and attempt, every metric recorded. */
export const otelVariant: ObservabilityVariant = {
  name: 'otel (SDK, spans dropped)',
  setup() {
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(dropping)] });
    const meterProvider = new MeterProvider();
    const telemetry = cairnTelemetry({ tracerProvider, meterProvider });
    return () => {
      telemetry.close();
      void tracerProvider.shutdown();
      void meterProvider.shutdown();
    };
  },
};
