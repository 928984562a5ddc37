package poolmetrics

import (
	"fmt"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// A Mapping's field names its series as selectors: a sample name, with
// label matchers if it needs them (`db_client_connection_count{state="used"}`),
// and alternatives separated by "|", of which the first the scrape has is
// read. Alternatives are how one mapping covers what different exporters
// make of one OpenTelemetry instrument: a unit suffix or none, a state
// label named after one semantic-conventions release or another.

// selector is one alternative of a field: the series of name that carry
// all of labels, times scale (0.001 for a time exported in milliseconds).
type selector struct {
	name   string
	labels map[string]string
	scale  float64
}

// field is a Mapping field compiled: its alternatives, in order.
type field []selector

// msByConvention are the instruments of OpenTelemetry's database
// semantic conventions up to v1.24 whose unit is milliseconds: an
// exporter that adds no unit suffix exports them under these names.
// (v1.25 renamed them db.client.connection.* and made their unit s.)
var msByConvention = []string{
	"db_client_connections_create_time",
	"db_client_connections_wait_time",
	"db_client_connections_use_time",
}

// parseField compiles a Mapping field. Each alternative is read with the
// Prometheus text parser, as a sample line with the value 0, so that a
// selector is written (and quoted) exactly as an exposition writes it.
func parseField(s string) (field, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var f field
	for _, alt := range splitAlternatives(s) {
		alt = strings.TrimSpace(alt)
		if alt == "" {
			return nil, fmt.Errorf("series %q: an empty alternative between the |", s)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(strings.NewReader(alt + " 0\n"))
		if err != nil || len(fams) != 1 {
			return nil, fmt.Errorf("series %q: want a sample name with optional label matchers, as name{label=\"value\"}: %w", alt, err)
		}
		for name, fam := range fams {
			sel := selector{name: name, scale: unitScale(name)}
			for _, m := range fam.GetMetric() {
				for _, l := range m.GetLabel() {
					if sel.labels == nil {
						sel.labels = make(map[string]string)
					}
					sel.labels[l.GetName()] = l.GetValue()
				}
			}
			f = append(f, sel)
		}
	}
	return f, nil
}

// splitAlternatives splits s at the | that are not inside a quoted label
// value.
func splitAlternatives(s string) []string {
	var out []string
	quoted, escaped, start := false, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case escaped:
			escaped = false
		case c == '\\' && quoted:
			escaped = true
		case c == '"':
			quoted = !quoted
		case c == '|' && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// unitScale is what a sample of name is multiplied by to be in seconds or
// a plain count: 0.001 for a time in milliseconds, as the name's unit
// suffix says or, without one, as the convention it was named by says.
func unitScale(name string) float64 {
	base := name
	for _, suffix := range []string{"_sum", "_count", "_total", "_bucket"} {
		if b, ok := strings.CutSuffix(base, suffix); ok {
			base = b
			break
		}
	}
	if strings.HasSuffix(name, "_count") || strings.HasSuffix(name, "_bucket") {
		return 1 // a number of observations, whatever their unit
	}
	if strings.HasSuffix(base, "_milliseconds") {
		return 0.001
	}
	for _, n := range msByConvention {
		if base == n {
			return 0.001
		}
	}
	return 1
}

// value reads the first alternative of f the scrape has: the sum of its
// series that carry its labels and also the mapping's (and, with pool,
// the pool's name label), scaled; ok is false when no alternative has a
// series.
func (idx seriesIndex) fieldValue(f field, labels map[string]string, pool string) (sum float64, ok bool) {
	for _, sel := range f {
		for _, s := range idx[sel.name] {
			if hasLabels(s.labels, sel.labels) && hasLabels(s.labels, labels) && inPool(s.labels, pool) {
				sum += s.value
				ok = true
			}
		}
		if ok {
			return sum * sel.scale, true
		}
	}
	return 0, false
}

// poolLabels are the labels OpenTelemetry's exporters name a pool by:
// pool.name (semantic conventions up to v1.24) and
// db.client.connection.pool.name (from v1.25), as Prometheus names them.
var poolLabels = []string{"pool_name", "db_client_connection_pool_name", "db_client_connections_pool_name"}

// inPool reports whether a series belongs to the pool named pool ("":
// every series does).
func inPool(have []*dto.LabelPair, pool string) bool {
	if pool == "" {
		return true
	}
	for _, l := range have {
		for _, n := range poolLabels {
			if l.GetName() == n && l.GetValue() == pool {
				return true
			}
		}
	}
	return false
}

// String is the field as written in the mapping, for messages.
func (f field) String() string {
	parts := make([]string, 0, len(f))
	for _, s := range f {
		parts = append(parts, s.name+labelString(s.labels))
	}
	return strings.Join(parts, " | ")
}

func labelString(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	ls := model.LabelSet{}
	for k, v := range labels {
		ls[model.LabelName(k)] = model.LabelValue(v)
	}
	return ls.String()
}
