package runner

import (
	"context"
	"io"
	"net"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine"
)

// Telemetry gets a run's requests as they end and the run once its
// directory is written: internal/app/otelexport's Exporter, which sends
// them to an OpenTelemetry collector. The runner knows nothing of OTel.
type Telemetry interface {
	// Spans is the engine's sink for the run named run (nil: none).
	Spans(run string) engine.SpanSink
	// RunWritten exports the written run in dir and records what it sent
	// in sum (the runner then writes sum again); dbAddr is the host:port
	// of the PostgreSQL the probe watched. It logs, and never fails the run.
	RunWritten(ctx context.Context, dir string, sum *rundir.Summary, dbAddr string, log io.Writer)
}

// spans is o's sink for the engine, nil without telemetry.
func (o *Options) spans() engine.SpanSink {
	if o.Telemetry == nil {
		return nil
	}
	return o.Telemetry.Spans(o.Name)
}

// probedAddr is the host:port of the PostgreSQL env's probe watches, ""
// without one (the DSN's password never leaves here).
func probedAddr(env *fixtures.Env) string {
	if env == nil || env.ProbeDSN == "" {
		return ""
	}
	cfg, err := pgconn.ParseConfig(env.ProbeDSN)
	if err != nil {
		return ""
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}
