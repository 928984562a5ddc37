package live

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestGeneratorGauges: what was not measured is not served — no gauge
// before the first second, no lateness for a second with nothing due, no
// busy share without /proc/stat — while the cores are.
func TestGeneratorGauges(t *testing.T) {
	for _, tc := range []struct {
		g       *Generator
		want    []string
		notWant []string
	}{
		{nil, nil, []string{"leakbench_generator_"}},
		{&Generator{CPUs: 4, Cores: 1.5}, []string{"leakbench_generator_cpus 4", "leakbench_generator_cores 1.5"},
			[]string{"leakbench_generator_machine_busy_ratio", "leakbench_generator_schedule_late"}},
	} {
		s, err := Serve("127.0.0.1:0", func() Snapshot { return Snapshot{Generator: tc.g} }, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &http.Client{Timeout: 5 * time.Second}
		resp, err := c.Get("http://" + s.Addr() + "/metrics")
		if err != nil {
			s.Close()
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		c.CloseIdleConnections()
		s.Close()
		for _, w := range tc.want {
			if !strings.Contains(string(body), w) {
				t.Errorf("%+v: scrape lacks %s", tc.g, w)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(string(body), w) {
				t.Errorf("%+v: scrape has %s:\n%s", tc.g, w, body)
			}
		}
	}
}
