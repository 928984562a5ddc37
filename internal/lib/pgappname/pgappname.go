// Package pgappname holds the application_name values of leakbench's own
// PostgreSQL sessions: the probe's, and the short checks made before a
// run. It is a leaf of its own because both sides need the names — the
// fixtures that make the checks, the probes that must not count them —
// and neither may import the other.
package pgappname

// Probe is the probe's own session, whatever its DSN says.
const Probe = "leakbench-probe"

// Preflight is the short connections leakbench makes to check a server
// before it probes it (a readiness poll, the external provider's ping and
// its read of the server's settings). The probe counts no backend of that
// name: one still exiting when the first sample runs — a backend's exit is
// asynchronous, and slower on a loaded machine — would otherwise pass for
// a client of the database, and hide that a probe DSN names a database the
// service does not use.
const Preflight = "leakbench-preflight"
