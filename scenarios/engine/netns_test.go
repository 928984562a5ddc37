package engine

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/internal/testing/testenv"
)

// netnsListenEnv makes TestNetnsHelper serve the hand-rolled MCP server
// on the address it names (inside the namespace it was started in).
const netnsListenEnv = "LEAKBENCH_NETNS_LISTEN"

// TestNetnsHelper is the server side of TestNetnsTarget, run with
// `ip netns exec`; without its variable it does nothing.
func TestNetnsHelper(t *testing.T) {
	addr := os.Getenv(netnsListenEnv)
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	mcptest.Start(t, mcptest.Options{Listener: ln})
	fmt.Printf("ADDR %s\n", ln.Addr())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin
}

// TestNetnsTarget loads a non-loopback address: the test creates a network
// namespace joined to this one by a veth pair, runs the server inside it,
// and plays a scenario against its address, as against a staging host.
// Everything it creates is removed, also when it fails.
func TestNetnsTarget(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Missing(t, "needs root to create a network namespace (CI runs as root)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		testenv.Missing(t, "needs ip (iproute2; .ci/run installs it)")
	}
	checkLeaks(t)
	id := os.Getpid() % 10000
	ns, host, peer := fmt.Sprintf("lbtest%d", id), fmt.Sprintf("lbh%d", id), fmt.Sprintf("lbn%d", id)
	subnet := fmt.Sprintf("10.251.%d", id%250)
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	t.Cleanup(func() {
		_ = exec.Command("ip", "link", "del", host).Run() // takes the peer with it
		_ = exec.Command("ip", "netns", "del", ns).Run()
	})
	ip("netns", "add", ns)
	ip("link", "add", host, "type", "veth", "peer", "name", peer)
	ip("link", "set", peer, "netns", ns)
	ip("addr", "add", subnet+".1/30", "dev", host)
	ip("link", "set", host, "up")
	ip("netns", "exec", ns, "ip", "addr", "add", subnet+".2/30", "dev", peer)
	ip("netns", "exec", ns, "ip", "link", "set", peer, "up")

	cmd := exec.Command("ip", "netns", "exec", ns, os.Args[0], "-test.run=^TestNetnsHelper$")
	cmd.Env = append(os.Environ(), netnsListenEnv+"="+subnet+".2:0")
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ADDR ")
	if err != nil || !ok || !strings.HasPrefix(addr, subnet+".2:") {
		t.Fatalf("server in the namespace did not start: %q %v", line, err)
	}
	res, err := RunPlan(context.Background(), mustParse(t, fmt.Sprintf(echoPlan, "", 3)), RunOptions{Target: "http://" + addr + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failures != 0 || res.Requests < 9 {
		t.Fatalf("requests %d failures %d %v", res.Requests, res.Failures, res.ErrorSamples)
	}
}
