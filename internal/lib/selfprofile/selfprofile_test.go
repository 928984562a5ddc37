package selfprofile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfilesWritten checks that LEAKBENCH_CPUPROFILE and
// LEAKBENCH_MEMPROFILE give profiles pprof reads (gzip-compressed
// protobuf: they start with gzip's magic bytes), and that a file that
// cannot be created is said on stderr.
func TestProfilesWritten(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{
		"LEAKBENCH_CPUPROFILE": filepath.Join(dir, "cpu.pprof"),
		"LEAKBENCH_MEMPROFILE": filepath.Join(dir, "mem.pprof"),
	}
	var stderr bytes.Buffer
	stop := Start(func(k string) string { return env[k] }, &stderr)
	burn := 0
	for i := range 1_000_000 {
		burn += i % 7
	}
	_ = burn
	stop()
	if stderr.Len() != 0 {
		t.Fatalf("stderr: %s", stderr.String())
	}
	for _, name := range []string{"cpu.pprof", "mem.pprof"} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b {
			t.Errorf("%s is not a gzip-compressed profile (%d bytes)", name, len(raw))
		}
	}

	stderr.Reset()
	bad := filepath.Join(dir, "no-such-dir", "cpu.pprof")
	stop = Start(func(k string) string {
		if k == "LEAKBENCH_CPUPROFILE" {
			return bad
		}
		return ""
	}, &stderr)
	stop()
	if !strings.Contains(stderr.String(), "LEAKBENCH_CPUPROFILE") || !strings.Contains(stderr.String(), "no-such-dir") {
		t.Errorf("a profile that cannot be written is not said: %q", stderr.String())
	}
}
