package poolmetrics

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/redact"
)

// Target is one Prometheus endpoint of the service under test.
type Target struct {
	URL string `json:"url"`
	// Mapping names the Mapping to read: a built-in one ("gateway",
	// "go_sql", "hikaricp", "sqlalchemy", "otel", "otel_legacy"), one of the custom mappings, or
	// empty (or "auto") to use the first built-in mapping whose series the
	// endpoint exports.
	Mapping string `json:"mapping,omitempty"`
}

// MarshalJSON masks a password in the URL.
func (t Target) MarshalJSON() ([]byte, error) {
	type plain Target
	return json.Marshal(plain{URL: redactURL(t.URL), Mapping: t.Mapping})
}

// Check reports the first of targets whose URL is not an http(s) URL or
// whose mapping is unknown, and a custom mapping that does not parse or
// names (itself or through its base) neither an acquired nor a max series.
// Its errors never include a password.
func Check(targets []Target, custom map[string]Mapping) error {
	for _, t := range targets {
		u, err := url.Parse(t.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("scrape URL %q: want http://host:port/path (usually …/metrics)", redactURL(t.URL))
		}
		if _, err := resolve(t.Mapping, custom); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(custom)) {
		if _, err := resolve(name, custom); err != nil {
			return err
		}
	}
	return nil
}

// resolve finds a Target's mapping by name among custom and the built-in
// ones (custom first), compiled; nil means auto.
func resolve(name string, custom map[string]Mapping) (*compiled, error) {
	if name == "" || name == "auto" {
		return nil, nil
	}
	if m, ok := custom[name]; ok {
		m.Name = name
		m, err := withBase(m)
		if err != nil {
			return nil, err
		}
		if m.Acquired == "" && m.Max == "" {
			return nil, fmt.Errorf("mapping %q names neither an acquired nor a max series", name)
		}
		return compile(&m)
	}
	for _, m := range builtinCompiled {
		if m.Name == name {
			return m, nil
		}
	}
	known := make([]string, 0, len(builtinMappings)+len(custom))
	for _, m := range builtinMappings {
		known = append(known, m.Name)
	}
	for n := range custom {
		known = append(known, n)
	}
	return nil, fmt.Errorf("unknown pool mapping %q (known: auto, %s)", name, strings.Join(known, ", "))
}

// redactURL is a scrape URL as it may be shown or recorded: the one
// redaction policy's (internal/lib/redact.URL: user info, secret query
// parameters such as ?token=…, the lot).
func redactURL(s string) string { return redact.URL(s) }
