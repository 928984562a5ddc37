package synthetic

import (
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// SizingSummary is a probed run to size: 1000 requests in 50 s with 2
// backends busy on average (100 connection-seconds), PostgreSQL's
// max_connections 100 with 3 reserved for superusers.
func SizingSummary() *rundir.Summary {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reserved := 0
	return &rundir.Summary{SchemaVersion: rundir.SchemaVersion, Name: "run", Started: t0, Ended: t0.Add(time.Minute), EndReason: rundir.EndCompleted,
		Probe: &rundir.ProbeSummary{Samples: 600, DatabaseSampled: true, StuckAfterSeconds: 1, IntervalSeconds: 0.1,
			EndReasons: map[string]int{}, Culprits: []rundir.Culprit{}, Warnings: []rundir.Warning{},
			// 2 backends busy on average over 50 s: 100 connection-seconds.
			Hold:   &rundir.Hold{Method: rundir.HoldMethod, Windows: 50, Seconds: 50, BusyBackendsMean: 2, Xacts: 2000, XactsPerSecond: 40, MeanSeconds: 0.05},
			Server: &rundir.ServerLimits{MaxConnections: 100, SuperuserReservedConnections: 3, ReservedConnections: &reserved}},
		Load: &rundir.LoadResult{Started: t0, Ended: t0.Add(50 * time.Second), Requests: 1000, ErrorsByKind: map[string]int64{}}}
}

// LoadPoints is a run's per-second load with peak requests in its
// busiest second.
func LoadPoints(peak int64) []rundir.LoadPoint {
	t0 := time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)
	return []rundir.LoadPoint{{Time: t0, Requests: 10}, {Time: t0.Add(time.Second), Requests: peak}, {Time: t0.Add(2 * time.Second), Requests: 20}}
}
