package probes

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"
)

// Gatherer returns the probe's own metrics (leakbench_probe_*), to serve
// beside other metrics on one address, as `leakbench run --metrics-addr`
// does with the load engine's.
func (p *Poller) Gatherer() prometheus.Gatherer { return p.metrics.reg }

// MetricNames lists the names of the probe's own metrics, as a scrape
// shows them before suffixes (_bucket, _sum, _count): what a dashboard may
// query.
func MetricNames() []string {
	mfs, err := newProbeMetrics().reg.Gather()
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(mfs))
	for _, mf := range mfs {
		names = append(names, mf.GetName())
	}
	sort.Strings(names)
	return names
}
