package faults

import (
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	s := time.Second
	for _, tt := range []struct {
		name  string
		specs []Spec
		want  string // "" for no problem; else the first problem's message starts so
	}{
		{"toxic", []Spec{{At: s, For: s, Link: "db", Toxic: "reset_peer"}}, ""},
		{"latency and reset on one link combine", []Spec{{At: s, For: 5 * s, Link: "db", Toxic: "latency"}, {At: 2 * s, For: s, Link: "db", Toxic: "reset_peer"}}, ""},
		{"same toxic, other stream", []Spec{{At: s, For: 5 * s, Link: "db", Toxic: "latency"}, {At: 2 * s, For: s, Link: "db", Toxic: "latency", Stream: "upstream"}}, ""},
		{"back to back", []Spec{{At: s, For: s, Link: "pg", Toxic: "timeout"}, {At: 2 * s, For: s, Link: "pg", Toxic: "timeout"}}, ""},
		{"actions", []Spec{{At: s, Action: "terminate_backends", Fraction: 0.5}, {At: s, For: s, Action: "pgbouncer_pause"}, {At: 3 * s, Action: "pgbouncer_reload"}}, ""},
		{"unknown link", []Spec{{At: s, For: s, Link: "cache", Toxic: "latency", Line: 7}}, `unknown link "cache"`},
		{"unknown toxic", []Spec{{At: s, For: s, Link: "db", Toxic: "gremlin"}}, `unknown toxic "gremlin"`},
		{"no for", []Spec{{At: s, Link: "db", Toxic: "latency"}}, "a toxic needs for"},
		{"after the run", []Spec{{At: 30 * s, For: s, Link: "db", Toxic: "latency"}}, "starts at 30s, after the run's 20s"},
		{"overlap", []Spec{{At: s, For: 5 * s, Link: "db", Toxic: "latency", Line: 3}, {At: 2 * s, For: s, Link: "db", Toxic: "latency", Line: 4}}, "overlaps the db latency of line 3"},
		{"two pauses", []Spec{{At: s, For: 5 * s, Action: "pgbouncer_pause"}, {At: 2 * s, For: s, Action: "pgbouncer_pause"}}, "overlaps the pgbouncer_pause"},
		{"action with link", []Spec{{At: s, Action: "pgbouncer_reload", Link: "db"}}, "an action (pgbouncer_reload) takes no link"},
		{"neither", []Spec{{At: s}}, "want link and toxic"},
		{"count and fraction", []Spec{{At: s, Action: "terminate_backends", Count: 2, Fraction: 0.5}}, "give count or fraction"},
		{"kill during a pause", []Spec{{At: s, For: 5 * s, Action: "pgbouncer_pause"}, {At: 2 * s, Action: "pgbouncer_kill"}}, "overlaps the pgbouncer_pause"},
		{"pause without for", []Spec{{At: s, Action: "pgbouncer_pause"}}, "pgbouncer_pause needs for"},
		{"restarts apart", []Spec{{At: s, For: 2 * s, Action: "postgres_restart"}, {At: 4 * s, Action: "pgbouncer_restart"}, {At: 5 * s, For: s, Link: "db", Toxic: "latency"}}, ""},
		{"a restart beside a toxic", []Spec{{At: s, For: 5 * s, Link: "pg", Toxic: "latency"}, {At: 2 * s, For: s, Action: "postgres_restart"}}, ""},
		{"terminate while postgres is down", []Spec{{At: s, For: 5 * s, Action: "postgres_restart", Line: 2}, {At: 2 * s, Action: "terminate_backends", Line: 3}}, "overlaps the postgres_restart of line 2"},
		{"pause while pgbouncer is down", []Spec{{At: 2 * s, For: 2 * s, Action: "pgbouncer_pause"}, {At: s, For: 5 * s, Action: "pgbouncer_restart"}}, "overlaps the pgbouncer_pause"},
	} {
		ps := Validate(tt.specs, 20*s)
		switch {
		case tt.want == "" && len(ps) > 0:
			t.Errorf("%s: %+v", tt.name, ps)
		case tt.want != "" && (len(ps) == 0 || !strings.HasPrefix(ps[0].Msg, tt.want)):
			t.Errorf("%s: got %+v, want %q…", tt.name, ps, tt.want)
		case tt.want != "" && ps[0].Line != tt.specs[ps[0].Index].Line:
			t.Errorf("%s: problem line %d, entry's %d", tt.name, ps[0].Line, tt.specs[ps[0].Index].Line)
		}
	}
}
