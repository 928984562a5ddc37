package probes

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes/poolmetrics"
)

// Config configures a Poller. It can be written into a run's record as it
// is: the DSNs, which carry passwords, are not marshalled, and scrape URLs
// are marshalled with any password masked.
type Config struct {
	// DSN reaches PostgreSQL directly (not through PgBouncer) as a role
	// with pg_monitor (pg_read_all_stats is what matters: without it other
	// roles' sessions show no state and no query).
	DSN string `json:"-"`
	// PgBouncerAdminDSN reaches PgBouncer's admin console as a user listed
	// in its stats_users or admin_users. Empty: no PgBouncer sampling.
	PgBouncerAdminDSN string `json:"-"`
	// Database is the datname to watch; empty means the DSN's database.
	Database string `json:"database"`
	// Interval between samples. Default 100 ms.
	Interval time.Duration `json:"interval"`
	// StuckAfter is how long a backend must sit idle in transaction to
	// count as stuck. Default 1 s.
	StuckAfter time.Duration `json:"stuck_after"`
	// RunDir, when set, receives samples.jsonl and episodes.jsonl,
	// appended to as sampling goes (created if missing).
	RunDir string `json:"-"`
	// ServerLogFile, when set, is PostgreSQL's log file (its stderr as the
	// stack records it, or log_destination = stderr under
	// logging_collector), which the probe reads, from the end it finds at
	// Start, for the FATAL lines of backends killed by
	// idle_in_transaction_session_timeout or pg_terminate_backend: those
	// episodes then end exactly (to the millisecond) when the server says
	// it killed them. It needs log_line_prefix to start with '%m [%p]'
	// (PostgreSQL's default) and messages in English. A log the probe
	// cannot read is a Warning (source "server log"), not an error.
	ServerLogFile string `json:"server_log_file,omitempty"`
	// KeepQueryText keeps the query texts of episodes (episodes.jsonl) and
	// culprits (the summary's example_query) as pg_stat_activity shows
	// them. SENSITIVE: services whose drivers interpolate values into the
	// SQL (psycopg2, JDBC's simple protocol, string-built queries) put
	// e-mail addresses, tokens and passwords (ALTER ROLE … PASSWORD '…')
	// there. Off (the default), texts are stored and shown masked:
	// querytext.Mask replaces every literal with ?. Either way control
	// characters are replaced (see Fingerprint).
	KeepQueryText bool `json:"keep_query_text,omitempty"`
	// SentTokens are the bearer tokens the run's virtual users sent (user
	// u sent SentTokens[u mod len]). An episode whose last query carries
	// one as a quoted literal records which (Episode.SentBy), so that a
	// stuck session of a service without trace context can be tied to
	// the users that sent it. SECRET: never serialized, never recorded.
	SentTokens []string `json:"-"`

	// Scrape lists Prometheus endpoints of the service under test whose
	// connection-pool series the probe reads every ScrapeInterval
	// (package poolmetrics).
	Scrape []poolmetrics.Target `json:"scrape,omitempty"`
	// ScrapeInterval between scrapes. Default 1 s.
	ScrapeInterval time.Duration `json:"scrape_interval,omitempty"`
	// Mappings adds pool mappings (or replaces built-in ones) that a
	// scrape target can name, for exporters whose series names the probe
	// does not know.
	Mappings map[string]poolmetrics.Mapping `json:"mappings,omitempty"`
	// MetricsAddr, when set, serves the probe's own metrics at
	// http://MetricsAddr/metrics while it runs (":0" picks a free port;
	// see Poller.MetricsURL).
	MetricsAddr string `json:"metrics_addr,omitempty"`
	// OnWarning, when set, is called when a source starts failing, fails
	// differently, or works again (Warning.Recovered). It is called from
	// the sampling goroutines and must not block.
	OnWarning func(rundir.Warning) `json:"-"`
}

// Defaults of Config.
const (
	DefaultInterval       = 100 * time.Millisecond
	DefaultStuckAfter     = time.Second
	DefaultScrapeInterval = time.Second
)

// MinInterval is the shortest Interval accepted: below it the probe's own
// reads would be a noticeable load on the server.
const MinInterval = 10 * time.Millisecond

// ErrConfig is wrapped by Start's errors about a bad Config.
var ErrConfig = errors.New("probe config")

func (c Config) withDefaults() Config {
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.StuckAfter == 0 {
		c.StuckAfter = DefaultStuckAfter
	}
	if c.ScrapeInterval == 0 {
		c.ScrapeInterval = DefaultScrapeInterval
	}
	return c
}

func (c Config) validate() error {
	if c.DSN == "" {
		return fmt.Errorf("%w: no PostgreSQL DSN", ErrConfig)
	}
	if c.Interval < MinInterval {
		return fmt.Errorf("%w: interval %s is below the minimum %s", ErrConfig, c.Interval, MinInterval)
	}
	if c.StuckAfter < 0 {
		return fmt.Errorf("%w: stuck-after %s is negative", ErrConfig, c.StuckAfter)
	}
	if len(c.Scrape) > 0 && c.ScrapeInterval < 100*time.Millisecond {
		return fmt.Errorf("%w: scrape interval %s is below the minimum 100ms", ErrConfig, c.ScrapeInterval)
	}
	if err := poolmetrics.Check(c.Scrape, c.Mappings); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// parseSetting reads a time setting as SHOW prints it: a number with one of
// PostgreSQL's time units (us, ms, s, min, h, d), milliseconds when it has
// none. "0" (or any non-positive value) means the timeout is off.
func parseSetting(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	i := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != '-' })
	num, unit := v, "ms"
	if i >= 0 {
		num, unit = v[:i], strings.TrimSpace(v[i:])
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("setting %q: not a number with a time unit", v)
	}
	units := map[string]time.Duration{
		"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second,
		"min": time.Minute, "h": time.Hour, "d": 24 * time.Hour,
	}
	u, ok := units[unit]
	if !ok {
		return 0, fmt.Errorf("setting %q: unknown time unit %q", v, unit)
	}
	if n <= 0 {
		return 0, nil
	}
	return time.Duration(n * float64(u)), nil
}
