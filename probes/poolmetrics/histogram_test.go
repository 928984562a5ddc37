package poolmetrics

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// useTimeScrape is an exposition of OpenTelemetry's use-time histogram
// under name, its bucket bounds les (in the unit the name says) and the
// cumulative counts in them, the last the +Inf bucket and the count.
func useTimeScrape(name string, les []string, counts []int) string {
	var b strings.Builder
	b.WriteString("# TYPE db_client_connection_max gauge\ndb_client_connection_max 10\n")
	b.WriteString("# TYPE " + name + " histogram\n")
	for i, le := range les {
		b.WriteString(name + `_bucket{le="` + le + `"} ` + strconv.Itoa(counts[i]) + "\n")
	}
	n := counts[len(counts)-1]
	b.WriteString(name + `_bucket{le="+Inf"} ` + strconv.Itoa(n) + "\n")
	b.WriteString(name + "_sum 1\n" + name + "_count " + strconv.Itoa(n) + "\n")
	return b.String()
}

// readScrape parses an exposition and reads it with the auto-detected
// mapping, as a scrape does.
func readScrape(t *testing.T, text string) rundir.AppPoolSample {
	t.Helper()
	fams, err := parseMetrics(http.Header{}, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	idx := indexFamilies(fams)
	m := idx.detect()
	if m == nil {
		t.Fatal("no mapping detected")
	}
	s, ok := idx.read(m)
	if !ok {
		t.Fatal("not read")
	}
	return s
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestHistogramQuantiles: the run's p50 and p95 are the increase of the
// buckets between scrapes, interpolated as histogram_quantile does —
// checked against values worked out by hand, with the buckets in
// seconds and in milliseconds, across a restart, with every checkout
// beyond the last finite bucket, and with no buckets at all.
func TestHistogramQuantiles(t *testing.T) {
	sec := []string{"0.01", "0.05", "0.1", "0.5", "1"}
	ms := []string{"10", "50", "100", "500", "1000"}
	for _, c := range []struct {
		name     string
		scrapes  []string
		p50, p95 float64
		atLeast  bool
		count    float64
	}{
		// Increase 10, 40, 70, 90, 100 of 100. p50: rank 50 in (0.05, 0.1]
		// holding 30, 10 into it: 0.05 + 0.05·10/30. p95: rank 95 in
		// (0.5, 1] holding 10, 5 into it: 0.5 + 0.5·5/10.
		{name: "seconds", scrapes: []string{
			useTimeScrape("db_client_connection_use_time_seconds", sec, []int{10, 20, 30, 40, 40, 40}),
			useTimeScrape("db_client_connection_use_time_seconds", sec, []int{20, 60, 100, 130, 140, 140}),
		}, p50: 0.05 + 0.05*10/30, p95: 0.75, count: 100},
		{name: "milliseconds", scrapes: []string{
			useTimeScrape("db_client_connection_use_time_milliseconds", ms, []int{10, 20, 30, 40, 40, 40}),
			useTimeScrape("db_client_connection_use_time_milliseconds", ms, []int{20, 60, 100, 130, 140, 140}),
		}, p50: 0.05 + 0.05*10/30, p95: 0.75, count: 100},
		// Restarted at the second scrape: its counts (5,5,5,10,10 of 10)
		// are the increase, then 0,10,20,20,20 of 20: 5,15,25,30,30 of 30.
		// p50: rank 15 at the top of (0.01, 0.05]: 0.05. p95: rank 28.5
		// in (0.1, 0.5] holding 5, 3.5 into it: 0.1 + 0.4·3.5/5.
		{name: "a restart between scrapes", scrapes: []string{
			useTimeScrape("db_client_connection_use_time_seconds", sec, []int{10, 20, 30, 40, 40, 40}),
			useTimeScrape("db_client_connection_use_time_seconds", sec, []int{5, 5, 5, 10, 10, 10}),
			useTimeScrape("db_client_connection_use_time_seconds", sec, []int{5, 15, 25, 30, 30, 30}),
		}, p50: 0.05, p95: 0.1 + 0.4*3.5/5, count: 30},
		// 7 checkouts, all beyond 1 s: the highest finite bound, a lower bound.
		{name: "every checkout in +Inf", scrapes: []string{
			useTimeScrape("db_client_connection_use_time_seconds", sec, []int{0, 0, 0, 0, 0, 0}),
			useTimeScrape("db_client_connection_use_time_seconds", sec, []int{0, 0, 0, 0, 0, 7}),
		}, p50: 1, p95: 1, atLeast: true, count: 7},
		{name: "a summary, no buckets", scrapes: []string{
			"db_client_connection_max 10\n# TYPE db_client_connection_use_time_seconds summary\ndb_client_connection_use_time_seconds_sum 1\ndb_client_connection_use_time_seconds_count 4\n",
			"db_client_connection_max 10\n# TYPE db_client_connection_use_time_seconds summary\ndb_client_connection_use_time_seconds_sum 3\ndb_client_connection_use_time_seconds_count 9\n",
		}},
		{name: "no use time at all", scrapes: []string{"db_client_connection_max 10\n", "db_client_connection_max 10\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var run HistogramRun
			for _, text := range c.scrapes {
				run.Add(readScrape(t, text).UseHistogram)
			}
			q := Quantiles(run.Increase(), "the service pool's use_time histogram", "checkouts")
			if c.count == 0 {
				if q != nil {
					t.Fatalf("got %+v, want none: nothing to estimate from", q)
				}
				return
			}
			if q == nil {
				t.Fatal("no quantiles")
			}
			if !near(q.P50.Seconds, c.p50) || !near(q.P95.Seconds, c.p95) || q.P95.AtLeast != c.atLeast || q.P50.AtLeast != c.atLeast || q.Observations != c.count {
				t.Errorf("p50 %+v, p95 %+v, %g checkouts; want %g, %g (at least: %v), %g", q.P50, q.P95, q.Observations, c.p50, c.p95, c.atLeast, c.count)
			}
			if c.atLeast != strings.Contains(q.Source, "lower bound") || !strings.Contains(q.Source, "an estimate") {
				t.Errorf("source %q: says it is an estimate, and a lower bound only when it is one", q.Source)
			}
		})
	}
}

// TestQuantileEdges: the first bucket interpolates from 0, a bound at or
// below 0 is returned as it is, a histogram that counted nothing has no
// quantile, and bounds that change mid-run (a restart with other
// buckets) give none rather than a mix.
func TestQuantileEdges(t *testing.T) {
	h := &rundir.Histogram{UpperBounds: []float64{0.2, 1}, Cumulative: []float64{4, 4}, Count: 4}
	if v, ok := Quantile(0.5, h); !ok || !near(v.Seconds, 0.1) || v.BucketLowSeconds != 0 || v.BucketHighSeconds != 0.2 {
		t.Errorf("first bucket: %+v %v, want 0.1 within 0–0.2", v, ok)
	}
	if v, ok := Quantile(0.5, &rundir.Histogram{UpperBounds: []float64{0, 1}, Cumulative: []float64{3, 4}, Count: 4}); !ok || v.Seconds != 0 {
		t.Errorf("bound 0: %+v %v, want 0", v, ok)
	}
	if _, ok := Quantile(0.5, &rundir.Histogram{UpperBounds: []float64{1}, Cumulative: []float64{0}}); ok {
		t.Error("an empty histogram gave a quantile")
	}
	var run HistogramRun
	run.Add(h)
	run.Add(&rundir.Histogram{UpperBounds: []float64{0.2, 1}, Cumulative: []float64{5, 6}, Count: 6})
	run.Add(&rundir.Histogram{UpperBounds: []float64{0.5, 2}, Cumulative: []float64{1, 1}, Count: 1})
	if got := run.Increase(); got != nil {
		t.Errorf("bounds changed mid-run: got %+v, want none", got)
	}
}
