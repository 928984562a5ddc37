package dashboard_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/leakbench/leakbench/internal/app/dashboard"
)

// Start refuses, before any load, an address other than loopback
// without a token: the page would show the run to anyone who reaches it.
func ExampleStart() {
	_, err := dashboard.Start(context.Background(), dashboard.Config{Addr: "0.0.0.0:5665"})
	fmt.Println(errors.Is(err, dashboard.ErrNotLoopback))

	d, err := dashboard.Start(context.Background(), dashboard.Config{Addr: "127.0.0.1:0", Title: "fixed"})
	if err != nil {
		panic(err)
	}
	defer d.Close()
	fmt.Println(d.URL()[:len("http://127.0.0.1:")])
	// Output:
	// true
	// http://127.0.0.1:
}
