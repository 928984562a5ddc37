package runner

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestShardsTempDirSwept: the shards' temporary directory that a leakbench
// killed with SIGKILL leaves is removed by the next one's; a live owner's
// is left alone.
func TestShardsTempDirSwept(t *testing.T) {
	if os.Getenv("LEAKBENCH_SHARDS_TEMP_HELPER") == "1" {
		// The helper process: make the directory, say where, wait to be
		// killed.
		dir, err := shardsTempDir(io.Discard)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(dir)
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestShardsTempDirSwept$")
	cmd.Env = append(os.Environ(), "LEAKBENCH_SHARDS_TEMP_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	_ = cmd.Process.Kill() // SIGKILL: nothing of the helper's runs after it
	_ = cmd.Wait()
	dead := strings.TrimSpace(line)
	if err != nil || !strings.HasPrefix(filepath.Base(dead), shardsTempPrefix) {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	t.Cleanup(func() { os.RemoveAll(dead) })
	if _, err := os.Stat(dead); err != nil {
		t.Fatalf("the killed helper's directory: %v", err)
	}

	var log strings.Builder
	live, err := shardsTempDir(&log)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(live)
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the directory of a leakbench killed with SIGKILL is still there after the next one made its own: %v (log: %q)", err, log.String())
	}
	again, err := shardsTempDir(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(again)
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live leakbench's directory was swept: %v", err)
	}
	if st, err := os.Stat(live); err == nil && st.Mode().Perm() != 0o700 {
		t.Errorf("mode %04o, want 0700", st.Mode().Perm())
	}
}
