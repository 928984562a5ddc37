// Package serverlog reads from PostgreSQL's log file when the server
// killed a backend — by idle_in_transaction_session_timeout or by
// pg_terminate_backend — so that an episode that ended in a kill ends
// exactly, at the logged millisecond, rather than somewhere between two
// samples.
//
// It reads only what the server appends after Open, a line split across
// polls included, and only the FATAL lines of PostgreSQL's default
// log_line_prefix ('%m [%p] ', which CheckPrefix checks) in English
// (lc_messages). Other lines are skipped; kills long before the latest
// are forgotten, so that its memory does not grow with the run.
//
// It is a package apart from probes because it reads a file the server
// writes, not the database, in a format of its own: the probes Poller
// reads log_line_prefix and log_timezone on its connection, opens the
// Log with them, polls it every sample and asks it (Find) for the kill
// of each backend that vanished.
//
//	if err := serverlog.CheckPrefix(prefix); err != nil {
//		return err
//	}
//	l, err := serverlog.Open(path, tz)
//	if err != nil {
//		return err
//	}
//	defer l.Close()
//	// every sample:
//	if err := l.Poll(); err != nil {
//		return err
//	}
//	if k, ok := l.Find(pid, lastSeen, goneAt); ok {
//		fmt.Println(pid, k.Reason, k.At)
//	}
package serverlog
