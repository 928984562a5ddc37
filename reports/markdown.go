package reports

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// WriteMarkdown writes one run's report.
func (s *Summary) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# leakbench run: %s\n\n", s.Name)
	fmt.Fprintf(&b, "Variant `%s`, profile `%s`, %s, ended: **%s**", s.Environment.Variant, s.Profile, s.Ended.Sub(s.Started).Round(100_000_000), s.EndReason)
	if s.Error != "" {
		fmt.Fprintf(&b, " — %s", mdEscape(s.Error))
	}
	b.WriteString("\n\n| | value |\n|---|---|\n")
	for _, row := range tableRows {
		fmt.Fprintf(&b, "| %s | %s |\n", row.label, row.value(s))
	}
	writeCulprits(&b, s, 5)
	writeErrors(&b, s)
	writeEnvironment(&b, s)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeCulprits(b *strings.Builder, s *Summary, max int) {
	if s.Probe == nil || len(s.Probe.Culprits) == 0 {
		return
	}
	b.WriteString("\n## Culprits (last query of stuck sessions)\n\n| episodes | total hold | max hold | application | query |\n|---:|---:|---:|---|---|\n")
	for i, c := range s.Probe.Culprits {
		if i == max {
			break
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | `%s` |\n", c.Episodes, seconds(c.TotalHoldSeconds), seconds(c.MaxHoldSeconds), mdEscape(c.ApplicationName), truncate(mdEscape(c.Fingerprint), 160))
	}
}

func writeErrors(b *strings.Builder, s *Summary) {
	if s.Load == nil || len(s.Load.ErrorsByKind) == 0 {
		return
	}
	kinds := make([]string, 0, len(s.Load.ErrorsByKind))
	for k := range s.Load.ErrorsByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	b.WriteString("\n## Errors by kind\n\n")
	for _, k := range kinds {
		fmt.Fprintf(b, "- %s: %d\n", k, s.Load.ErrorsByKind[k])
	}
}

func writeEnvironment(b *strings.Builder, s *Summary) {
	e := s.Environment
	fmt.Fprintf(b, "\n## Environment\n\nPostgreSQL %s (idle_in_transaction_session_timeout %s, max_connections %d), PgBouncer %s (%s pooling, pool %d), gateway pool %d, provider %s, leakbench %s.\n",
		e.PostgresVersion, seconds(e.IdleInTxTimeoutSeconds), e.MaxConnections, strings.TrimPrefix(e.PgBouncerVersion, "PgBouncer "), e.PoolMode, e.PgBouncerPoolSize, e.GatewayPoolSize, e.Provider, e.LeakbenchVersion)
}
