package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/leakbench/leakbench/internal/app/otelexport"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
)

// otlpFlags are --otlp-endpoint and --otlp-sample, on run, signoff,
// probe, capacity and soak.
type otlpFlags struct {
	endpoint *string
	sample   *float64
}

func addOTLPFlags(fs *flag.FlagSet) otlpFlags {
	return otlpFlags{
		endpoint: fs.String("otlp-endpoint", "", "send the run to an OpenTelemetry collector over OTLP/HTTP at this base `URL` (e.g. http://127.0.0.1:4318; traces to /v1/traces, metrics to /v1/metrics): each request as a client span of the trace it sent, each idle-in-transaction episode as a span in the trace of the request that left it, the key figures as gauges. Wins over OTEL_EXPORTER_OTLP_ENDPOINT and the other standard variables, which are read as usual; without either nothing is exported"),
		sample:   fs.Float64("otlp-sample", 1, "share of requests exported as spans, by trace id (0 to 1); episodes are always exported"),
	}
}

// start sets the export up; a nil exporter exports nothing.
func (f otlpFlags) start(ctx context.Context, log io.Writer) (*otelexport.Exporter, error) {
	x, err := otelexport.Start(ctx, otelexport.Config{Endpoint: *f.endpoint, SampleRatio: *f.sample, Version: version, Log: log})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
	}
	return x, nil
}

// telemetry is x as the runner's hook, nil (not a nil pointer) without one.
func telemetry(x *otelexport.Exporter) runner.Telemetry {
	if x == nil {
		return nil
	}
	return x
}
