// Package faults is the format of a profile's `faults:` timeline: what a
// fault is (a network fault on one of the stack's links, or a process fault
// on one of its servers), when it starts and how long it lasts, how a
// timeline is validated against the run's length before anything starts,
// and the recovery thresholds ("max<10") a faulted run is judged by.
//
// It applies nothing: the stack's proxies that carry the network faults
// are fixtures/faultproxy, and the application layer (internal/app/runner)
// plays the timeline, applying each fault through them or through the
// stack's process actions. Keeping the format apart lets the scenario
// language, the run directory and the reports read a timeline without
// linking Toxiproxy.
//
// The links are
//
//   - db: the service (gateway) → PgBouncer;
//   - pg: PgBouncer → PostgreSQL;
//   - upstream: the gateway → its upstream HTTP service.
//
// A Spec is one entry of the timeline:
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
package faults
