package probes

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Config configures a Poller. It can be written into a run's record as it
// is: the DSNs, which carry passwords, are not marshalled.
type Config struct {
	// DSN reaches PostgreSQL directly (not through PgBouncer) as a role
	// with pg_monitor (pg_read_all_stats is what matters: without it other
	// roles' sessions show no state and no query).
	DSN string `json:"-"`
	// PgBouncerAdminDSN reaches PgBouncer's admin console as an admin or
	// stats user. Empty: no PgBouncer sampling.
	PgBouncerAdminDSN string `json:"-"`
	// Database is the datname to watch; empty means the DSN's database.
	Database string `json:"database"`
	// Interval between samples. Default 250 ms.
	Interval time.Duration `json:"interval"`
	// StuckAfter is how long a backend must sit idle in transaction to
	// count as stuck. Default 1 s.
	StuckAfter time.Duration `json:"stuck_after"`
	// RunDir, when set, receives samples.jsonl and episodes.jsonl,
	// appended to as sampling goes (created if missing).
	RunDir string `json:"-"`
}

// Defaults of Config.
const (
	DefaultInterval   = 250 * time.Millisecond
	DefaultStuckAfter = time.Second
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
