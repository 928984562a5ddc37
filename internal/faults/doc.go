// Package faults injects the faults that make services leak — network
// faults on the stack's links and process faults on its servers — on a
// timeline, and says when each was applied and removed.
//
// Network faults are Toxiproxy toxics (github.com/Shopify/toxiproxy/v2): for
// the local provider in this process, no daemon (NewProxies and Add, one
// proxy per link on a free loopback port); for the docker provider in a
// container of the stack's own network running `leakbench faultproxy`
// (Serve), driven through its HTTP API (Remote). Either way the stack is
// wired through one proxy per link —
//
//   - db: the service (gateway) → PgBouncer;
//   - pg: PgBouncer → PostgreSQL;
//   - upstream: the gateway → its upstream HTTP service.
//
// A link without a toxic passes bytes through unchanged. A stack without
// faults has no proxies at all.
//
// A Spec is one entry of a profile's `faults:` timeline:
//
//	faults:
//	  - {at: 20s, for: 10s, link: db, toxic: reset_peer}
//	  - {at: 5s, for: 10s, link: db, toxic: latency, latency: 500ms, jitter: 50ms}
//	  - {at: 30s, action: terminate_backends, fraction: 0.5}
//	  - {at: 40s, for: 3s, action: pgbouncer_pause}
//	  - {at: 50s, for: 2s, action: pgbouncer_kill}   # every connection dropped, new clients wait
//	  - {at: 60s, for: 2s, action: pgbouncer_restart}   # the process stopped, started 2 s later
//	  - {at: 70s, for: 3s, action: postgres_restart}    # a fast shutdown, started 3 s later
//	  - {at: 55s, for: 5s, link: upstream, toxic: latency, latency: 2s}   # a slow upstream
//
// Validate checks a timeline against the run's length before anything
// starts; Play applies it (see play.go) and removes every fault it applied
// when its time is up or its context is cancelled.
package faults
