// Package soak judges a soak run (leakbench soak): over the steady window
// of a constant load — its warm-up left out — it fits a line to each
// resource's series (the service's connections as the database sees them,
// per application; idle-in-transaction and stuck sessions; PgBouncer's
// sv_active and cl_waiting; the service pool's acquired connections; the
// service process's memory, file descriptors and goroutines) and says
// whether it grows and whether it came back in the cool-down:
//
//	connections (mcp-gateway): growing: +37 connections/hour (R² 0.96), not recovered in cool-down
//
// It streams the run directory's files (samples.jsonl, process.jsonl,
// episodes.jsonl) through package jsonl and keeps one point a second per
// resource: nothing per request or per sample.
package soak

import (
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// Verdicts of a resource and of a soak.
const (
	Growing   = "growing"
	Recovered = "recovered"
	Flat      = "flat"
	NotJudged = "not judged"
)

// kind is what a resource counts and how steep its growth must be.
type kind struct {
	unit string
	// perHour is the default growth threshold; floor the least rise over
	// the steady window that counts as growth, and the most above its
	// start that still counts as recovered.
	perHour, floor float64
	bytes          bool
}

// Kinds are the resource kinds with their default thresholds — the keys
// of rundir.SoakSettings.Slopes.
var kinds = map[string]kind{
	"connections":       {unit: "connections", perHour: 5, floor: 2},
	"idle_in_tx":        {unit: "sessions", perHour: 5, floor: 2},
	"stuck":             {unit: "sessions", perHour: 5, floor: 2},
	"sv_active":         {unit: "server connections", perHour: 5, floor: 2},
	"cl_waiting":        {unit: "clients", perHour: 5, floor: 2},
	"pool_acquired":     {unit: "connections", perHour: 5, floor: 2},
	"unclosed_sessions": {unit: "sessions", perHour: 5, floor: 2},
	"rss_bytes":         {unit: "bytes", perHour: 64 << 20, floor: 16 << 20, bytes: true},
	"open_fds":          {unit: "file descriptors", perHour: 20, floor: 5},
	"goroutines":        {unit: "goroutines", perHour: 100, floor: 20},
}

// Defaults are a soak's settings where a profile or flag leaves them out.
func Defaults(s rundir.SoakSettings) rundir.SoakSettings {
	if s.Baseline == 0 {
		s.Baseline = 10 * time.Second
	}
	if s.Warmup == 0 {
		s.Warmup = 30 * time.Second
	}
	if s.MinPoints == 0 {
		s.MinPoints = 30
	}
	if s.MinR2 == 0 {
		s.MinR2 = 0.5
	}
	return s
}

// KindNames lists the resource kinds, for help texts and validation.
func KindNames() []string {
	return []string{"connections", "idle_in_tx", "stuck", "sv_active", "cl_waiting", "pool_acquired", "unclosed_sessions", "rss_bytes", "open_fds", "goroutines"}
}

// threshold is the growth threshold per hour of kind k under s.
func threshold(s rundir.SoakSettings, k string) float64 {
	if v, ok := s.Slopes[k]; ok {
		return v
	}
	return kinds[k].perHour
}

// Threshold is the growth threshold per hour of kind k under s: what a
// live view of a soak holds its slopes so far to.
func Threshold(s rundir.SoakSettings, k string) float64 { return threshold(s, k) }

// Floor is the least rise over the steady window that counts as growth
// for kind k.
func Floor(k string) float64 { return kinds[k].floor }
