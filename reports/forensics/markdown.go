package forensics

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/format"
)

// WriteMarkdown writes a run's forensics f (nil writes nothing) under a
// Markdown heading: leaked or released late, the stuck episodes by the
// request that left them (method/tool × outcome), the share joined, the
// worst episodes with their request, and the lock cascade.
func WriteMarkdown(b *strings.Builder, heading string, f *rundir.Forensics) {
	if f == nil || f.StuckEpisodes == 0 && !f.Saturated {
		return
	}
	fmt.Fprintf(b, "\n%s\n\n", heading)
	if f.StuckEpisodes > 0 {
		fmt.Fprintf(b, "%d stuck episodes (idle in transaction ≥ %s): **%d leaked** (never released by the service: %s), **%d held** (released by the service, late",
			f.StuckEpisodes, format.Seconds(f.StuckAfterSeconds), f.Leaked, Reasons(f.LeakedByReason), f.SlowReleases)
		if f.SlowReleases > 0 {
			fmt.Fprintf(b, "; the longest after %s", format.Seconds(f.SlowReleaseMaxSeconds))
		}
		b.WriteString(").\n")
	}
	if f.Saturated {
		fmt.Fprintf(b, "The run was **saturated**: %s.\n", f.SaturatedReason)
	}
	switch {
	case f.StuckEpisodes == 0:
	case f.RequestsIndexed:
		fmt.Fprintf(b, "Joined to the request that left them: %d of %d (%.1f%%); %d carried a trace context.\n",
			f.Joined, f.StuckEpisodes, 100*f.JoinedShare, f.Traced)
		if f.SentByToken > 0 {
			fmt.Fprintf(b, "Without trace context, %d carried a bearer token leakbench sent, which names the users exactly; %d of them joined to "+
				"the one request of those users in flight when the session went idle in transaction (none of their earlier requests given up), "+
				"%d left as candidates only (several in flight, or an earlier one abandoned that the service may still have been running), %d with none in flight.\n",
				f.SentByToken, f.TokenJoined, f.TokenAmbiguous, f.TokenNoCandidate)
		}
	default:
		fmt.Fprintf(b, "%d of %d carried a trace context; no request index (leakbench did not drive the load).\n", f.Traced, f.StuckEpisodes)
	}
	if f.Traced == 0 && f.StuckEpisodes > 0 {
		b.WriteString("No stuck session carried trace context: have the service comment its SQL with the request's traceparent (sqlcommenter; leakbench's docs/trace-context.md says how, stack by stack) and each is tied to its request exactly.\n")
	}
	if f.MalformedComments > 0 {
		fmt.Fprintf(b, "%d sqlcommenter comments could not be read (cut or malformed) and were ignored.\n", f.MalformedComments)
	}
	if f.EpisodesBlocking > 0 {
		fmt.Fprintf(b, "Blocked by stuck sessions: **%d backends, total wait %s** (behind %d stuck episodes' locks).\n",
			f.BlockedBackends, format.Seconds(f.BlockedWaitSeconds), f.EpisodesBlocking)
	} else if f.StuckEpisodes > 0 {
		b.WriteString("Blocked by stuck sessions: none.\n")
	}
	if len(f.ByRequest) > 0 {
		b.WriteString("\n| left by | outcome | stuck episodes | total hold | max hold | request lasted (mean) |\n|---|---|---:|---:|---:|---:|\n")
		for i, g := range f.ByRequest {
			if i == 10 {
				fmt.Fprintf(b, "| … %d more | | | | | |\n", len(f.ByRequest)-i)
				break
			}
			fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s |\n", md(RequestLabel(g.Method, g.Name)), g.Outcome, g.Episodes,
				format.Seconds(g.TotalHoldSeconds), format.Seconds(g.MaxHoldSeconds), secondsOrDash(g.MeanRequestSeconds))
		}
	}
	if len(f.Worst) > 0 {
		b.WriteString("\nWorst episodes:\n\n| held | ended | request | outcome | user / iteration | sent | blocked |\n|---:|---|---|---|---|---|---|\n")
		for i, w := range f.Worst {
			if i == 5 {
				break
			}
			req, outcome, who, sent := "not joined", "", "", ""
			if r := w.Request; r != nil {
				req, outcome = RequestLabel(r.Method, r.Name), r.Outcome
				if r.Kind != "" {
					outcome += " (" + r.Kind + ")"
				}
				who = fmt.Sprintf("%s #%d / %d", r.Scenario, r.User, r.Iteration)
				if w.JoinedBy == rundir.JoinedByToken {
					outcome += " (by token)"
				}
				sent = fmt.Sprintf("%s, gave its answer or up after %s", r.Started.UTC().Format("15:04:05.000"), format.Seconds(r.Ended.Sub(r.Started).Seconds()))
			} else if w.TraceID == "" {
				req = "no trace context"
			}
			blocked := ""
			if w.Blocked > 0 {
				blocked = fmt.Sprintf("%d, %s", w.Blocked, format.Seconds(w.BlockedWaitSeconds))
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", format.Seconds(w.HoldSeconds), w.EndReason, md(req), outcome, md(who), sent, blocked)
		}
	}
}

// RequestLabel names a request: its method, and the tool or resource it
// named, if any.
func RequestLabel(method, name string) string {
	if name == "" {
		return method
	}
	return method + " " + name
}

func secondsOrDash(v float64) string {
	if v == 0 {
		return "—"
	}
	return format.Seconds(v)
}

// md keeps a cell on one line and out of Markdown's syntax.
func md(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ", "`", "'").Replace(s)
}

// Citation says, for the verdict, which requests left the stuck
// sessions and what the client did: "left by tools/call generate_report
// requests the client aborted after 0.90 s (190 of 200; 100% joined)".
func Citation(f *rundir.Forensics) string {
	if f == nil || f.StuckEpisodes == 0 || f.Joined == 0 || len(f.ByRequest) == 0 {
		return ""
	}
	g := f.ByRequest[0]
	if g.Method == "(not joined)" || g.Method == "(no trace context)" {
		return ""
	}
	cite := fmt.Sprintf("left by %s requests %s%s (%d of %d stuck; %.0f%% joined)", RequestLabel(g.Method, g.Name),
		outcomeWords[g.Outcome], after(g.MeanRequestSeconds), g.Episodes, f.StuckEpisodes, 100*f.JoinedShare)
	if r := f.First; r != nil && r.Request != nil && (r.Request.Method != g.Method || r.Request.Name != g.Name || r.Request.Outcome != g.Outcome) {
		// The first stuck session is what started it; the most common
		// kind may be its consequence (a pool run dry times requests out).
		cite = fmt.Sprintf("the first left by a %s request %s%s; most %s", RequestLabel(r.Request.Method, r.Request.Name),
			outcomeWords[r.Request.Outcome], after(r.Request.Ended.Sub(r.Request.Started).Seconds()), cite)
	}
	return cite
}

var outcomeWords = map[string]string{"aborted": "the client abandoned", "timeout": "the client timed out on",
	"canceled": "the run canceled", "failed": "that failed", "ok": "that succeeded"}

func after(s float64) string {
	if s <= 0 {
		return ""
	}
	return " after " + format.Seconds(s)
}

// Reasons counts episodes by end reason: "1 terminated, 9 timeout".
func Reasons(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d %s", m[k], k)
	}
	return b.String()
}
