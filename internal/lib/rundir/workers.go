package rundir

// Workers is summary.json's workers: how the run's load was played by
// worker processes of leakbench on one machine (leakbench run --workers),
// each one slice of the plan (a shard, "i/N"), merged exactly into this
// run. Absent when one process played the load.
type Workers struct {
	// Count is how many workers were started; GOMAXPROCS the processors
	// each was given.
	Count      int `json:"count"`
	GOMAXPROCS int `json:"gomaxprocs"`
	// SourceAddrs are the local addresses the workers' connections were
	// dialed from, and SourceAddrsFrom how they were chosen: "flag"
	// (--source-addrs), "loopback" (spread over 127.0.0.0/8 for a
	// loopback target) or empty (the kernel's choice).
	SourceAddrs     []string `json:"source_addrs,omitempty"`
	SourceAddrsFrom string   `json:"source_addrs_from,omitempty"`
	// OpenFilesLimit is one worker's open-file limit (RLIMIT_NOFILE) and
	// LocalPorts the local ports of one source address
	// (ip_local_port_range), as the budget check read them.
	OpenFilesLimit uint64 `json:"open_files_limit"`
	LocalPorts     int    `json:"local_ports"`
	// Complete: every worker finished and its results were merged; false
	// when one died (Worker.Exit says which), the merged load then being
	// the others' alone.
	Complete bool     `json:"complete"`
	Workers  []Worker `json:"workers"`
}

// Worker is one worker process.
type Worker struct {
	// Segment is the slice of the plan it played ("i/N").
	Segment string `json:"segment"`
	PID     int    `json:"pid"`
	// Users and Connections are the most it was planned to hold at once
	// (a listen user has two connections).
	Users       int      `json:"users"`
	Connections int      `json:"connections"`
	SourceAddrs []string `json:"source_addrs,omitempty"`
	// Exit is how the process ended: "exit status 0", "signal: killed", …
	Exit string `json:"exit"`
	// EndReason is how its load ended (completed, interrupted, …); empty
	// when it left no results.
	EndReason string `json:"end_reason,omitempty"`
	// Requests and Failures are its own counts, part of the merged ones.
	Requests int64 `json:"requests"`
	Failures int64 `json:"failures"`
	// Generator is its own self-check (the merged one is load.generator).
	Generator *Generator `json:"generator,omitempty"`
}
