package otelexport

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// ProbeWritten exports what `leakbench probe` left in dir — the episodes
// as spans (no request index: none is joined), the probe's figures as
// gauges — for the database the DSN reaches (database, if set, names the
// one watched); stuckAfter is the probe's threshold. The line on log says
// what was delivered. The DSN's password never leaves here.
func (x *Exporter) ProbeWritten(ctx context.Context, dir, dsn, database string, stuckAfter time.Duration, log io.Writer) {
	if x == nil {
		return
	}
	sum := &rundir.Summary{Name: "probe", Forensics: &rundir.Forensics{StuckAfterSeconds: stuckAfter.Seconds()}}
	if b, err := os.ReadFile(filepath.Join(dir, rundir.ProbeSummaryFile)); err == nil {
		var ps rundir.ProbeSummary
		if json.Unmarshal(b, &ps) == nil {
			sum.Probe = &ps
		}
	}
	var addr string
	if cfg, err := pgconn.ParseConfig(dsn); err == nil {
		addr = net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
		sum.Environment.Database = cfg.Database
	}
	if database != "" {
		sum.Environment.Database = database
	}
	if sum.Probe != nil {
		// Leaked, as the report counts it without forensics: the timeout's kills.
		sum.Forensics.Leaked = sum.Probe.TimeoutTerminated
	}
	x.RunWritten(ctx, dir, sum, addr, log)
	if sum.OTLP == nil {
		fmt.Fprintln(log, "otlp: nothing exported")
	}
}
