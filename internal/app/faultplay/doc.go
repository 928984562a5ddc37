// Package faultplay plays a profile's faults: timeline (scenarios/faults)
// against a running stack while the load runs: toxics on the stack's link
// proxies, PgBouncer paused, reloaded or killed, backends terminated,
// servers restarted — each applied at its time, removed at its end or when
// the run stops, its recovery watched in the probe's samples, its errors
// counted from the run's request index, and the recovery thresholds judged.
// The timeline's format and checks are scenarios/faults'; the runner
// starts a Player beside the load and stops it with the run.
package faultplay
