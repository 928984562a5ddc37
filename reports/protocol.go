package reports

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// protocolRow is the table's line saying which MCP protocol the users
// spoke (load.protocol): "2026-07-28 × 60 (protocolVersion auto)". A
// 2026-07-28 run and a 2025 one load a gateway differently (no session,
// per-request _meta, server/discover where initialize was), so a
// comparison must show what each side spoke.
var protocolRow = metricRow{"MCP protocol spoken (users)", protocolText}

// rowsFor is tableRows for these runs: with protocolRow when one of them
// recorded its protocol, so that runs from before it was recorded keep
// their tables as they were.
func rowsFor(runs ...*Summary) []metricRow {
	if slices.ContainsFunc(runs, func(s *Summary) bool { return s != nil && s.Load != nil && len(s.Load.Protocol) > 0 }) {
		return append(slices.Clip(tableRows), protocolRow)
	}
	return tableRows
}

// protocolText lists the versions the users spoke, newest first, with how
// many users spoke each, and the plan's protocolVersion setting.
func protocolText(s *Summary) string {
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
	if p := s.Load.Plan; p != nil && p.ProtocolVersion != "" {
		text += " (protocolVersion " + p.ProtocolVersion + ")"
	}
	return text
}
