package rundir

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestConfigRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := &Config{Name: "before", Variant: "commit-in-finally", Version: "v1",
		Profile: ProfileRecord{Name: "ci", Probe: ProbeSettings{Interval: 100 * time.Millisecond, StuckAfter: 2 * time.Second, Drain: 8 * time.Second}},
		Stack:   json.RawMessage(`{"idle_in_transaction_session_timeout":5000000000,"pool_mode":"transaction","gateway_pool_size":40,"gateway_stateless":false}`)}
	if err := WriteConfig(dir, in); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, ConfigFile))
	if len(raw) == 0 || raw[len(raw)-1] != '\n' {
		t.Fatalf("%s is empty or not newline-terminated", ConfigFile)
	}
	out, err := ReadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := out.StackFacts()
	if out.Name != in.Name || out.Profile.Probe != in.Profile.Probe || st.IdleInTxTimeout != 5*time.Second || st.GatewayPoolSize != 40 || st.PoolMode != "transaction" {
		t.Errorf("read back %+v (stack %+v), wrote %+v", out, st, in)
	}
	// The stack's record is kept as its owner wrote it, every field.
	if !bytes.Contains(raw, []byte(`"gateway_stateless": false`)) {
		t.Errorf("%s lost a field of the stack's record:\n%s", ConfigFile, raw)
	}
}

// Run directories of older versions keep their probe settings at the top
// of the profile, some with durations as strings.
func TestReadConfigOlderLayouts(t *testing.T) {
	for name, raw := range map[string]string{
		"top-level, strings": `{"name":"after","variant":"fixed","profile":{"name":"ci","probe_interval":"100ms","stuck_after":"1s"},
			"stack":{"idle_in_transaction_session_timeout":"5s","pool_mode":"transaction","gateway_pool_size":40},"leakbench_version":"old"}`,
		"probe section, numbers": `{"name":"after","variant":"fixed","profile":{"name":"ci","probe":{"interval":100000000,"stuck_after":1000000000}},
			"stack":{"idle_in_transaction_session_timeout":5000000000,"pool_mode":"transaction","gateway_pool_size":40}}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(raw), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := ReadConfig(dir)
			if err != nil {
				t.Fatal(err)
			}
			st := c.StackFacts()
			if c.Profile.Probe.Interval != 100*time.Millisecond || c.Profile.Probe.StuckAfter != time.Second ||
				st.IdleInTxTimeout != 5*time.Second || st.GatewayPoolSize != 40 || c.Name != "after" {
				t.Errorf("ReadConfig = %+v", c)
			}
		})
	}
	if _, err := ReadConfig(t.TempDir()); err == nil {
		t.Error("ReadConfig of a directory without config.json succeeded")
	}
}

func TestWriteFileLeavesNoTemporaryOnFailure(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFile(filepath.Join(dir, "missing", "x.json"), []byte("{}")); err == nil {
		t.Fatal("WriteFile into a missing directory succeeded")
	}
	if err := WriteFile(filepath.Join(dir, "x.json"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "x.json" {
		t.Errorf("directory holds %v, want only x.json", ents)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "x.json")); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
}
