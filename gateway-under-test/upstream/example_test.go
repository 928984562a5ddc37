package upstream_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/leakbench/leakbench/gateway-under-test/upstream"
)

func ExampleStart() {
	up, err := upstream.Start(context.Background(), upstream.Config{Listen: "127.0.0.1:0"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer up.Close(context.Background())
	resp, err := http.Post(up.URL()+"/call?latency_ms=10", "application/json", strings.NewReader(`{"payload":"hi"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, strings.TrimSpace(string(body)))
	// Output:
	// 200 {"echo":{"payload":"hi"},"latency_ms":10}
}
