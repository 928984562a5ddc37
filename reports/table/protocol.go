package table

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// protocolRow is the table's line saying which MCP protocol the users
// spoke (load.protocol): "2026-07-28 × 60 (protocolVersion auto)". A
// 2026-07-28 run and a 2025 one load a gateway differently (no session,
// per-request _meta, server/discover where initialize was), so a
// comparison must show what each side spoke.
var protocolRow = Row{"MCP protocol spoken (users)", protocolText}

// For is Rows for these runs: with protocolRow when one of them
// recorded its protocol, so that runs from before it was recorded keep
// their tables as they were.
func For(runs ...*rundir.Summary) []Row {
	rows := Rows
	if slices.ContainsFunc(runs, func(s *rundir.Summary) bool { return s != nil && s.Load != nil && len(s.Load.Protocol) > 0 }) {
		rows = append(slices.Clip(rows), protocolRow)
	}
	if slices.ContainsFunc(runs, func(s *rundir.Summary) bool { return s != nil && s.Load != nil && !s.Load.Features.Empty() }) {
		rows = append(slices.Clip(rows), featuresRow)
	}
	return rows
}

// featuresRow is the table's line saying what the users did with the
// 2026-07-28 features beyond plain requests (load.features): cache hits,
// input round trips, tasks, notification streams. They change what the
// target sees (a cached listing is a request it never gets), so a
// comparison must show them.
var featuresRow = Row{"2026-07-28 features", featuresText}

// featuresText sums up load.features in one line.
func featuresText(s *rundir.Summary) string {
	if s.Load == nil || s.Load.Features.Empty() {
		return "none"
	}
	f := s.Load.Features
	var parts []string
	if len(f.CacheHits) > 0 {
		var n int64
		for _, v := range f.CacheHits {
			n += v
		}
		parts = append(parts, fmt.Sprintf("%d cache hits", n))
	}
	if f.InputRoundTrips > 0 {
		parts = append(parts, fmt.Sprintf("%d input round trips", f.InputRoundTrips))
	}
	if t := f.Tasks; t != nil {
		parts = append(parts, fmt.Sprintf("%d tasks (%d completed, %d failed, %d cancelled, %d given up)", t.Created, t.Completed, t.Failed, t.Cancelled, t.GivenUp))
	}
	if l := f.Listen; l != nil {
		var n int64
		for _, v := range l.Events {
			n += v
		}
		text := fmt.Sprintf("%d streams, %d notifications", l.Streams, n)
		if l.Unsupported > 0 {
			text += fmt.Sprintf(", %d users without one", l.Unsupported)
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, "; ")
}

// protocolText lists the versions the users spoke, newest first, with how
// many users spoke each, and the plan's protocolVersion setting.
func protocolText(s *rundir.Summary) string {
	if s.Load == nil || len(s.Load.Protocol) == 0 {
		return "n/a"
	}
	versions := slices.Sorted(maps.Keys(s.Load.Protocol))
	slices.Reverse(versions)
	parts := make([]string, len(versions))
	for i, v := range versions {
		parts[i] = fmt.Sprintf("%s × %d", v, s.Load.Protocol[v])
	}
	text := strings.Join(parts, ", ")
	if p := recordedPlan(s); p != nil && p.ProtocolVersion != "" {
		text += " (protocolVersion " + p.ProtocolVersion + ")"
	}
	return text
}

// recordedPlan is the plan the run played, read back from its record in
// summary.json; nil when the run recorded none (older runs) or it cannot
// be read — the report then says what the summary's figures say.
func recordedPlan(s *rundir.Summary) *plan.Plan {
	if s.Load == nil || len(s.Load.Plan) == 0 {
		return nil
	}
	p, err := scenariofile.ReadRecorded(s.Load.Plan)
	if err != nil {
		return nil
	}
	return p
}
