package mcp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// BenchmarkCallTool measures one tools/call of the lean client. The server
// runs in the same process, so ns/op and allocs/op include its share; the
// "canned" case answers with fixed bytes and shows the client's own cost.
func BenchmarkCallTool(b *testing.B) {
	args := []byte(`{"text":"hello"}`)
	run := func(b *testing.B, url string) {
		c := NewClient(url, ClientOptions{})
		defer c.CloseIdleConnections()
		ctx := context.Background()
		s := c.NewSession("bench-token")
		if err := s.Initialize(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := s.CallTool(ctx, "echo", args); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		_ = s.Close(ctx)
	}
	b.Run("sdk-json", func(b *testing.B) { run(b, mcptest.Start(b, mcptest.Options{SDK: true}).URL) })
	b.Run("sdk-sse", func(b *testing.B) { run(b, mcptest.Start(b, mcptest.Options{SDK: true, SSE: true}).URL) })
	b.Run("canned-json", func(b *testing.B) {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			switch {
			case contains(body, `"initialize"`):
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"c","version":"1"}}}`)
			case contains(body, `"notifications/initialized"`):
				w.WriteHeader(http.StatusAccepted)
			default:
				// Our ids count up from 1 per session; echo back the
				// id the client sent to stay a valid answer.
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+mcptest.IDOf(body)+`,"result":{"content":[{"type":"text","text":"hello"}]}}`)
			}
		}))
		defer ts.Close()
		run(b, ts.URL)
	})
}

// BenchmarkCallToolSDKClient is the same call through the go-sdk client,
// for comparison.
func BenchmarkCallToolSDKClient(b *testing.B) {
	srv := mcptest.Start(b, mcptest.Options{SDK: true})
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIdleSessionCost reports what an initialized, idle session costs:
// goroutines and heap bytes per session, lean client versus go-sdk client.
// The go-sdk server runs in-process, so both figures include its share
// (the same server in both cases); the difference is the client's. This is
// why the engine uses the lean client.
func BenchmarkIdleSessionCost(b *testing.B) {
	const n = 50
	measure := func(b *testing.B, open func(ctx context.Context) func()) {
		ctx := context.Background()
		for b.Loop() {
			var ms0, ms1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms0)
			g0 := runtime.NumGoroutine()
			closers := make([]func(), 0, n)
			for range n {
				closers = append(closers, open(ctx))
			}
			time.Sleep(50 * time.Millisecond) // let background streams settle
			runtime.GC()
			runtime.ReadMemStats(&ms1)
			b.ReportMetric(float64(runtime.NumGoroutine()-g0)/n, "goroutines/session")
			b.ReportMetric(float64(int64(ms1.HeapAlloc)-int64(ms0.HeapAlloc))/n, "heapB/session")
			for _, c := range closers {
				c()
			}
		}
	}
	b.Run("lean", func(b *testing.B) {
		srv := mcptest.Start(b, mcptest.Options{SDK: true})
		c := NewClient(srv.URL, ClientOptions{MaxConns: n})
		defer c.CloseIdleConnections()
		measure(b, func(ctx context.Context) func() {
			s := c.NewSession("")
			if err := s.Initialize(ctx); err != nil {
				b.Fatal(err)
			}
			return func() { _ = s.Close(ctx) }
		})
	})
	b.Run("go-sdk", func(b *testing.B) {
		srv := mcptest.Start(b, mcptest.Options{SDK: true})
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
		defer hc.CloseIdleConnections()
		client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "v0"}, nil)
		measure(b, func(ctx context.Context) func() {
			cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc}, nil)
			if err != nil {
				b.Fatal(err)
			}
			return func() { _ = cs.Close() }
		})
	})
}

func contains(b []byte, s string) bool { return bytes.Contains(b, []byte(s)) }

// BenchmarkCallToolEras sets a 2026-07-28 tools/call beside a 2025 one,
// on the same server: the canned endpoint (which speaks both eras and
// answers with fixed bytes) in a helper process — the client's own cost,
// the same traced as the engine traces every request (the trace context
// then shares _meta with 2026-07-28's members), and go-sdk's dual-era
// server (its share included).
func BenchmarkCallToolEras(b *testing.B) {
	args := []byte(`{"text":"hello"}`)
	run := func(b *testing.B, url, setting string, ctx context.Context) {
		c := NewClient(url, ClientOptions{ProtocolVersion: setting})
		defer c.CloseIdleConnections()
		s := c.NewSession("bench-token")
		if err := s.Initialize(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		cpu0 := processCPU()
		for b.Loop() {
			if err := s.CallTool(ctx, "echo", args); err != nil {
				b.Fatal(err)
			}
		}
		// This process's CPU time (user and system) per call: with the
		// server in a helper process, the client's alone; ns/op is the
		// round trip's wall time.
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		b.StopTimer()
		_ = s.Close(ctx)
	}
	eras := []struct{ name, setting string }{{"2025", ""}, {"2026", Version20260728}}
	for _, srv := range []struct {
		name   string
		url    func(b *testing.B) string
		traced bool
	}{
		{"canned", helperURL, false},
		{"canned-traced", helperURL, true},
		{"sdk-json", func(b *testing.B) string {
			return mcptest.Start(b, mcptest.Options{SDK: true, DualEra: true}).URL
		}, false},
	} {
		for _, era := range eras {
			b.Run(srv.name+"/"+era.name, func(b *testing.B) {
				ctx := context.Background()
				if srv.traced {
					ctx = traced(ctx)
				}
				run(b, srv.url(b), era.setting, ctx)
			})
		}
	}
}

// helperURL serves mcptest's canned endpoint from a helper process, so
// that the figures are the client's alone.
func helperURL(b *testing.B) string { return mcptest.StartHelper(b, mcptest.HelperCanned).URL }

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
