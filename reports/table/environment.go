package table

import (
	"fmt"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/format"
)

// Environment are the rows that describe what a run ran against.
var Environment = []Row{
	{"Gateway variant", func(s *rundir.Summary) string {
		if s.Environment.Provider == "external" {
			return "— (your own service: " + format.OrDash(s.Name) + ")"
		}
		return format.OrDash(s.Environment.Variant)
	}},
	{"Profile", func(s *rundir.Summary) string { return format.OrDash(s.Profile) }},
	{"PostgreSQL", func(s *rundir.Summary) string { return format.OrDash(s.Environment.PostgresVersion) }},
	{"idle_in_transaction_session_timeout", func(s *rundir.Summary) string { return TimeoutSetting(s.Environment.IdleInTxTimeoutSeconds) }},
	{"max_connections", func(s *rundir.Summary) string { return positiveOrUnknown(s.Environment.MaxConnections) }},
	{"PgBouncer", func(s *rundir.Summary) string {
		if !PgBouncerSeen(s) {
			return "not probed"
		}
		return format.OrDash(s.Environment.PgBouncerVersion)
	}},
	{"PgBouncer pool mode / pool size", func(s *rundir.Summary) string {
		if !PgBouncerSeen(s) {
			return "not probed"
		}
		return format.OrDash(s.Environment.PoolMode) + " / " + positiveOrUnknown(s.Environment.PgBouncerPoolSize)
	}},
	{"Service (gateway) pool size", func(s *rundir.Summary) string {
		if s.Environment.GatewayPoolSize > 0 {
			return fmt.Sprint(s.Environment.GatewayPoolSize)
		}
		if s.Probe != nil && s.Probe.AppPoolSampled && s.Probe.AppPoolMax > 0 {
			return fmt.Sprintf("%g (from its metrics)", s.Probe.AppPoolMax)
		}
		return "unknown (no pool metrics)"
	}},
	{"Stack provider / target", func(s *rundir.Summary) string {
		return format.OrDash(s.Environment.Provider) + " / " + format.OrDash(s.Environment.Target)
	}},
	{"Scenario", Scenario},
	{"Probe interval / stuck threshold", func(s *rundir.Summary) string {
		if s.Probe == nil {
			return "—"
		}
		return format.Seconds(s.Probe.IntervalSeconds) + " / " + format.Seconds(s.Probe.StuckAfterSeconds)
	}},
	{"leakbench version / commit", func(s *rundir.Summary) string {
		return format.OrDash(s.Environment.LeakbenchVersion) + " / " + format.OrDash(s.Environment.LeakbenchCommit)
	}},
}

// Scenario is the run's scenario in one line, from the plan it played;
// a result without one (recorded before plans) has its users and timeout.
func Scenario(s *rundir.Summary) string {
	switch {
	case s.Load == nil:
		return "—"
	case recordedPlan(s) != nil:
		return recordedPlan(s).Describe()
	case s.Load.Config.Users > 0:
		c := s.Load.Config
		return fmt.Sprintf("%d users for %s; request timeout %s", c.Users, c.Duration, c.RequestTimeout)
	}
	return "—"
}

// Ending are the rows that say how a run ended.
var Ending = []Row{
	{"Ended", func(s *rundir.Summary) string {
		if s.Error != "" {
			return s.EndReason + " — " + s.Error
		}
		return s.EndReason
	}},
	{"Started / duration", func(s *rundir.Summary) string {
		if s.Started.IsZero() {
			return "—"
		}
		return s.Started.UTC().Format(time.RFC3339) + " / " + s.Ended.Sub(s.Started).Round(100*time.Millisecond).String()
	}},
	{"Load interrupted / users aborted / peak users", func(s *rundir.Summary) string {
		if s.Load == nil {
			return "—"
		}
		return fmt.Sprintf("%t / %d / %d", s.Load.Interrupted, s.Load.AbortedUsers, s.Load.PeakUsers)
	}},
	{"Iterations / re-initializations / init retries", func(s *rundir.Summary) string {
		if s.Load == nil {
			return "—"
		}
		return fmt.Sprintf("%d / %d / %d", s.Load.Iterations, s.Load.Reinits, s.Load.InitRetries)
	}},
	{"Probe samples (failed)", func(s *rundir.Summary) string {
		if s.Probe == nil {
			return "—"
		}
		return fmt.Sprintf("%d (%d)", s.Probe.Samples, s.Probe.FailedSamples)
	}},
	{"Idle-in-transaction episodes", func(s *rundir.Summary) string {
		if s.Probe == nil {
			return "—"
		}
		return fmt.Sprint(s.Probe.Episodes)
	}},
}

// positiveOrUnknown is n, or "unknown" when it was not observed (0).
func positiveOrUnknown(n int) string {
	if n <= 0 {
		return "unknown"
	}
	return fmt.Sprint(n)
}

// TimeoutSetting is a timeout setting in seconds, 0 meaning off.
func TimeoutSetting(sec float64) string {
	if sec <= 0 {
		return "off"
	}
	return format.Seconds(sec)
}

// PgBouncerSeen: the run knew a PgBouncer — its version was read, or the
// probe sampled its console.
func PgBouncerSeen(s *rundir.Summary) bool {
	return s.Environment.PgBouncerVersion != "" || (s.Probe != nil && s.Probe.PgBouncerSampled)
}
