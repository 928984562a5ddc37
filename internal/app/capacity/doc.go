// Package capacity finds the largest load a service holds every limit at:
// leakbench capacity. It steps the load up — users of a constant-vus
// scenario, or the rate of a constant-arrival-rate one — in stages held
// long enough to settle, until a limit trips, then bisects between the
// last stage that held and the first that broke to the resolution asked.
//
// Each stage is a whole leakbench run (package runner) against one stack
// started once — the reference gateway's variant on local processes, or
// the user's own service (--target) — so its run directory, probes and
// reports are the ones every run has, kept under the output directory
// (stage-01-users-40/, …). The limits are judged on what those runs
// already compute: the stuck sessions the probe counted, the pool verdict
// the report derives (service pool, PgBouncer, the database view), and the
// scenario language's thresholds, which the engine evaluates on the
// stage's own result (error rate, latency by method or tool). The limits
// a stage broke are ordered by when each first tripped in it, read from
// its samples, request index and per-second load (onset.go): the limit
// that "tripped first" is the earliest, with its time, or says its time
// was not recorded. A stage
// whose generator saturated, or whose load was still climbing at its end,
// judges nothing of the service: the search stops there and says so,
// never reporting that load as the service's knee.
//
// A typical search, from a profile's capacity: section:
//
//	capacity:
//	  load: users
//	  start: 10
//	  max: 400
//	  stage: 8s
//	  resolution: 10%
//	  stuck_sessions: 0
//	  pool: exhausted
//	  error_rate: 0.01
//	  thresholds:
//	    mcp_req_duration{name:generate_report}: ["p(95)<400"]
//
// and Run's Result is written as summary.json's capacity section, Markdown,
// HTML, JUnit and a curve of load against latency, errors and the pool
// (package reports/capacity).
package capacity
