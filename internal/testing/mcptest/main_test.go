package mcptest

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that the tests leave no goroutine behind: every stream
// ends on CloseStreams or when its client goes away, every server is closed.
func TestMain(m *testing.M) {
	code := m.Run()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	if err := goleak.Find(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "leaked goroutines:", err)
		code = 1
	}
	os.Exit(code)
}
