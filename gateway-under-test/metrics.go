package gateway

import "github.com/prometheus/client_golang/prometheus"

// poolCollector exports pgxpool's statistics, read at scrape time, under
// names modelled on client_golang's database/sql collector (go_sql_*).
type poolCollector struct {
	store                                                   *Store
	acquired, idle, total, max, constructing                *prometheus.Desc
	acquires, waits, waitSeconds, canceled, leakedNotClosed *prometheus.Desc
}

func newPoolCollector(s *Store) *poolCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("mcp_gateway_db_pool_"+name, help, nil, nil)
	}
	return &poolCollector{
		store:           s,
		acquired:        d("acquired_connections", "Connections currently checked out of the pool."),
		idle:            d("idle_connections", "Idle connections in the pool."),
		total:           d("total_connections", "Connections in the pool (acquired, idle and being opened)."),
		max:             d("max_connections", "Maximum size of the pool."),
		constructing:    d("constructing_connections", "Connections being opened."),
		acquires:        d("acquires_total", "Successful acquires from the pool."),
		waits:           d("acquire_waits_total", "Acquires that had to wait for a connection (pool empty)."),
		waitSeconds:     d("acquire_wait_seconds_total", "Total time spent waiting in acquires that had to wait."),
		canceled:        d("acquires_canceled_total", "Acquires cancelled by their context (timed out or client gone)."),
		leakedNotClosed: d("unclosed_sessions", "Sessions whose request has finished but which were never closed (leaked)."),
	}
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.acquired, c.idle, c.total, c.max, c.constructing, c.acquires, c.waits, c.waitSeconds, c.canceled, c.leakedNotClosed} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.store.pool.Stat()
	g := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	k := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	g(c.acquired, float64(st.AcquiredConns()))
	g(c.idle, float64(st.IdleConns()))
	g(c.total, float64(st.TotalConns()))
	g(c.max, float64(st.MaxConns()))
	g(c.constructing, float64(st.ConstructingConns()))
	k(c.acquires, float64(st.AcquireCount()))
	k(c.waits, float64(st.EmptyAcquireCount()))
	k(c.waitSeconds, st.EmptyAcquireWaitTime().Seconds())
	k(c.canceled, float64(st.CanceledAcquireCount()))
	g(c.leakedNotClosed, float64(c.store.unclosed()))
}
