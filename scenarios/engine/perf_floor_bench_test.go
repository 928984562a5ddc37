//go:build linux

package engine

import (
	"bytes"
	"container/heap"
	"math/rand/v2"
	"net"
	"net/url"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/internal/nbio"
)

// BenchmarkFloorActiveToolsCall is the floor under
// BenchmarkEngineActiveToolsCall: the same load — LEAKBENCH_ACTIVE_USERS
// users, a connection each, 0.2–1.0 s uniform think, the engine's own
// tools/call request (its bytes, as it writes them), the same canned server
// in a child process — played by the least any client can do. One OS
// thread and one epoll set serve every user; a request is the three
// system calls the engine makes, made as it makes them (package nbio: a
// peek that the idle connection is still open, the write, the read of the
// answer), and a heap of due times stands for the think; no goroutine per
// user, no JSON, no metrics. What it costs
// per request is the kernel's work for one request on loopback (the
// sender's write also runs the server's side of TCP and wakes it) plus a
// few microseconds: the least CPU per request an engine can spend in this
// shape on this machine. It reports user and system CPU apart, as the
// engine's benchmark does, so that the two read side by side.
//
// Written by hand, as a measurement: no library plays a load with nothing
// of its own on top.
func BenchmarkFloorActiveToolsCall(b *testing.B) {
	load := newActiveLoad(b)
	for b.Loop() {
		reportCPU(b, load.users, playFloor(b, load))
	}
}

// activeLoad is the active-user load's setting, shared by its
// benchmarks: LEAKBENCH_ACTIVE_USERS (3,000) users, windows of
// LEAKBENCH_ACTIVE_SECONDS (10), and the canned server in a child process.
type activeLoad struct {
	users int
	hold  time.Duration
	url   string // the server's MCP endpoint
	host  string // its host:port, which the floor dials
}

func newActiveLoad(b *testing.B) activeLoad {
	load := activeLoad{users: envInt("LEAKBENCH_ACTIVE_USERS", 3000),
		hold: time.Duration(envInt("LEAKBENCH_ACTIVE_SECONDS", 10)) * time.Second}
	mcptest.RaiseOpenFiles(b)
	load.url = mcptest.StartHelper(b, mcptest.HelperCanned).URL
	u, err := url.Parse(load.url)
	if err != nil {
		b.Fatal(err)
	}
	load.host = u.Host
	return load
}

// cpuWindow is one steady window of load: the requests made in it, its
// wall time and the process's CPU at its start and end.
type cpuWindow struct {
	requests int64
	wall     time.Duration
	c0, c1   cpuTimes
}

func (w cpuWindow) cpu() time.Duration { return w.c1.total() - w.c0.total() }

// playFloor connects the floor's users, lets each send and think at least
// once, and measures a window of steady load.
func playFloor(b *testing.B, load activeLoad) cpuWindow {
	f := newFloor(b, load.host, load.users)
	defer f.close()
	f.play(2 * time.Second)
	w, r0, t0 := cpuWindow{c0: cpuSplit()}, f.requests, time.Now()
	f.play(load.hold)
	w.c1, w.requests, w.wall = cpuSplit(), f.requests-r0, time.Since(t0)
	if f.failed != "" {
		b.Fatal(f.failed)
	}
	return w
}

// BenchmarkEngineOverFloor is the engine's CPU per request as a multiple
// of the floor's, the two measured side by side in one run on the same
// server: floor, engine, floor, engine, floor, each window
// LEAKBENCH_ACTIVE_SECONDS of the active-user load. The absolute figures
// move with the machine (its loopback TCP, what else runs); the ratio and
// the engine's microseconds above the floor are the engine's own. It
// reports floor-µs/req (the mean of its windows), engine-µs/req (of its
// windows), x-floor and above-floor-µs/req. LEAKBENCH_ENGINE_GOMAXPROCS
// runs the engine's windows alone on that many processors (the Go
// scheduler's share: see the README's efficiency figures).
func BenchmarkEngineOverFloor(b *testing.B) {
	load := newActiveLoad(b)
	engineProcs := envInt("LEAKBENCH_ENGINE_GOMAXPROCS", runtime.GOMAXPROCS(0))
	// The engine's windows alone run on engineProcs: the floor and the
	// server keep theirs.
	playEngine := func() activeWindow {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(engineProcs))
		return playActiveToolsCall(b, load, false)
	}
	for b.Loop() {
		var floorCPU, engineCPU time.Duration
		var floorReqs, engineReqs int64
		for i := range 5 {
			if i%2 == 0 {
				w := playFloor(b, load)
				floorCPU, floorReqs = floorCPU+w.cpu(), floorReqs+w.requests
				continue
			}
			w := playEngine()
			engineCPU, engineReqs = engineCPU+w.cpu(), engineReqs+w.requests
		}
		floorPer := float64(floorCPU.Nanoseconds()) / 1e3 / float64(floorReqs)
		enginePer := float64(engineCPU.Nanoseconds()) / 1e3 / float64(engineReqs)
		b.ReportMetric(float64(load.users), "users")
		b.ReportMetric(floorPer, "floor-µs/req")
		b.ReportMetric(enginePer, "engine-µs/req")
		b.ReportMetric(enginePer/floorPer, "x-floor")
		b.ReportMetric(enginePer-floorPer, "above-floor-µs/req")
	}
}

// reportCPU reports the rate and the CPU per request of a steady window
// in which users made requests: the figures the engine's benchmark
// and its floor's read side by side.
func reportCPU(b *testing.B, users int, w cpuWindow) {
	reqs, wall := float64(w.requests), w.wall.Seconds()
	b.ReportMetric(float64(users), "users")
	b.ReportMetric(reqs/wall, "req/s")
	b.ReportMetric(w.cpu().Seconds()/wall, "cores")
	b.ReportMetric(float64(w.cpu().Microseconds())/reqs, "cpu-µs/req")
	b.ReportMetric(float64((w.c1.user-w.c0.user).Microseconds())/reqs, "user-µs/req")
	b.ReportMetric(float64((w.c1.sys-w.c0.sys).Microseconds())/reqs, "sys-µs/req")
}

// cpuTimes is the process's user and system CPU.
type cpuTimes struct{ user, sys time.Duration }

func (c cpuTimes) total() time.Duration { return c.user + c.sys }

func cpuSplit() cpuTimes {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return cpuTimes{time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())}
}

// floorUser is one user of the floor: its socket, when its next request
// is due, and what of the answer it has read.
type floorUser struct {
	fd   int
	due  time.Time
	at   int // index in the heap
	got  []byte
	busy bool
}

// floorHeap orders the thinking users by due time.
type floorHeap []*floorUser

func (h floorHeap) Len() int           { return len(h) }
func (h floorHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h floorHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].at, h[j].at = i, j }
func (h *floorHeap) Push(x any)        { u := x.(*floorUser); u.at = len(*h); *h = append(*h, u) }
func (h *floorHeap) Pop() any {
	o := *h
	u := o[len(o)-1]
	*h = o[:len(o)-1]
	return u
}

// floor is the whole client: the users, their epoll set, the request.
type floor struct {
	ep       int
	users    map[int32]*floorUser
	thinking floorHeap
	request  []byte
	rng      *rand.Rand
	requests int64
	failed   string
	buf      []byte
	events   []syscall.EpollEvent
}

// floorRequest is the engine's tools/call request as it writes it (an
// MCP 2025 session's, as the engine's benchmark plays): the same headers
// and the same size.
func floorRequest(host string) []byte {
	body := `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"_meta":{"traceparent":"00-d50ab2301e60c22fd74f008db6fecf6f-57ad5ad1e63ccaa0-01"},"name":"echo","arguments":{"text":"user 644 iteration 8"}}}`
	return []byte("POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: leakbench/0.1.0\r\n" +
		"Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n" +
		"Mcp-Session-Id: s-645\r\nMcp-Protocol-Version: 2025-06-18\r\n" +
		"Traceparent: 00-d50ab2301e60c22fd74f008db6fecf6f-57ad5ad1e63ccaa0-01\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

// newFloor connects the users, each due within its first second.
func newFloor(b *testing.B, addr string, users int) *floor {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		b.Fatal(err)
	}
	f := &floor{ep: ep, users: make(map[int32]*floorUser, users), request: floorRequest(addr),
		rng: rand.New(rand.NewPCG(1, 2)), buf: make([]byte, 4096), events: make([]syscall.EpollEvent, 256)}
	b.Cleanup(f.close)
	now := time.Now()
	for range users {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		// The socket is taken out of Go's poller (a dup, non-blocking) so
		// that this thread alone waits on it.
		file, err := c.(*net.TCPConn).File()
		_ = c.Close()
		if err != nil {
			b.Fatal(err)
		}
		fd, err := syscall.Dup(int(file.Fd()))
		_ = file.Close()
		if err != nil {
			b.Fatal(err)
		}
		if err := syscall.SetNonblock(fd, true); err != nil {
			b.Fatal(err)
		}
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | -syscall.EPOLLET, Fd: int32(fd)}
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			b.Fatal(err)
		}
		fu := &floorUser{fd: fd, due: now.Add(time.Duration(f.rng.Int64N(int64(time.Second))))}
		f.users[int32(fd)] = fu
		heap.Push(&f.thinking, fu)
	}
	return f
}

// play runs the load for d on the calling goroutine, locked to its thread.
func (f *floor) play(d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for end := time.Now().Add(d); f.failed == ""; {
		now := time.Now()
		if !now.Before(end) {
			return
		}
		for len(f.thinking) > 0 && !f.thinking[0].due.After(now) {
			f.send(heap.Pop(&f.thinking).(*floorUser))
		}
		wait := end.Sub(now)
		if len(f.thinking) > 0 {
			wait = min(wait, f.thinking[0].due.Sub(now))
		}
		n, err := syscall.EpollWait(f.ep, f.events, int(wait/time.Millisecond)+1)
		if err != nil && err != syscall.EINTR {
			f.failed = "epoll_wait: " + err.Error()
		}
		for _, ev := range f.events[:max(n, 0)] {
			f.receive(f.users[ev.Fd])
		}
	}
}

// send peeks that the connection is open, as the engine does after an
// idle spell, and writes the request.
func (f *floor) send(u *floorUser) {
	if _, err := nbio.Peek(u.fd); err != syscall.EAGAIN {
		f.failed = "the server closed or wrote on an idle connection"
		return
	}
	if n, err := nbio.Write(u.fd, f.request); err != nil || n != len(f.request) {
		f.failed = "write: short or failed"
		return
	}
	u.busy, u.got = true, u.got[:0]
}

// receive reads what the answer sent; once it is whole (its head and
// Content-Length bytes), the user thinks again.
func (f *floor) receive(u *floorUser) {
	// Reading stops once the answer is whole, as the engine's does (it
	// knows the length): reading on to EAGAIN would be a fourth system
	// call the engine does not make. Edge-triggered, a part-read answer
	// is read again at once, and its rest raises the next event.
	if !u.busy {
		f.failed = "the server closed or wrote on an idle connection"
		return
	}
	for !answerComplete(u.got) {
		n, err := nbio.Read(u.fd, f.buf)
		if err == syscall.EAGAIN {
			return
		}
		if err != nil || n == 0 {
			f.failed = "the server closed or failed mid-answer"
			return
		}
		u.got = append(u.got, f.buf[:n]...)
	}
	u.busy = false
	f.requests++
	u.due = time.Now().Add(200*time.Millisecond + time.Duration(f.rng.Int64N(int64(800*time.Millisecond))))
	heap.Push(&f.thinking, u)
}

// answerComplete reports whether b holds a whole 200 answer with a
// Content-Length body (the canned server's only kind).
func answerComplete(b []byte) bool {
	head, body, ok := bytes.Cut(b, []byte("\r\n\r\n"))
	if !ok {
		return false
	}
	_, v, ok := bytes.Cut(bytes.ToLower(head), []byte("content-length: "))
	if !ok {
		return false
	}
	v, _, _ = bytes.Cut(v, []byte("\r\n"))
	n, err := strconv.Atoi(string(v))
	return err == nil && len(body) >= n
}

func (f *floor) close() {
	for fd := range f.users {
		_ = syscall.Close(int(fd))
	}
	clear(f.users)
	if f.ep >= 0 {
		_ = syscall.Close(f.ep)
		f.ep = -1
	}
}
