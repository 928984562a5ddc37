// Package nbio makes the socket calls of a request — write, read, and a
// peek at an idle connection — on a non-blocking socket without telling
// the Go scheduler that a system call begins: syscall.RawSyscall instead
// of syscall.Syscall, on Linux.
//
// Why: an announced system call lets the scheduler's monitor take the
// processor away from a call that runs past its 20 µs tick and hand it to
// another thread, which it must wake; on return the caller must get a
// processor back. A loopback write runs the server's side of TCP too and
// takes about that long in a virtual machine, so a load generator paid
// wake-ups on the other core for no work, on nearly every request.
// Measured side by side on 3,000 users a connection each
// (BenchmarkEngineActiveToolsCall, issue #28), the raw calls cut the
// engine's CPU per request by a fifth to a third.
//
// The one condition RawSyscall asks is that the call cannot block: the
// sockets Go's netpoller hands out are non-blocking (a write or read that
// would wait returns EAGAIN, and the caller waits in the netpoller), and
// Peek says MSG_DONTWAIT. Never pass a blocking descriptor.
//
// Built with -race, the calls are announced ones again (package syscall's),
// since only those tell the race detector that a read follows the write it
// answers.
package nbio
