package scenarios

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func validConfig() Config {
	return Config{Target: "http://127.0.0.1:8080/mcp", Users: 10, Duration: 10 * time.Second}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		want string // substring of the error; "" for valid
	}{
		{"valid", func(*Config) {}, ""},
		{"localhost", func(c *Config) { c.Target = "https://localhost:8443/mcp" }, ""},
		{"ipv6 loopback", func(c *Config) { c.Target = "http://[::1]:8080/mcp" }, ""},
		{"container network", func(c *Config) { c.Target = "http://172.18.0.5:8080/mcp" }, ""},
		{"all options", func(c *Config) {
			c.RampUp, c.ThinkMin, c.ThinkMax, c.RequestTimeout = time.Second, time.Millisecond, time.Millisecond, time.Second
			c.ListToolsEvery, c.Tools, c.Tokens = -1, []ToolCall{{Name: "a", Weight: 2}, {Name: "b"}}, []string{"t1", "t2"}
		}, ""},
		{"no users", func(c *Config) { c.Users = 0 }, "users must be > 0"},
		{"too many users", func(c *Config) { c.Users = MaxUsers + 1 }, "users must be <="},
		{"no duration", func(c *Config) { c.Duration = 0 }, "duration must be > 0"},
		{"empty target", func(c *Config) { c.Target = "" }, "target is empty"},
		{"bad url", func(c *Config) { c.Target = "http://[::1" }, "target is not a URL"},
		{"ftp", func(c *Config) { c.Target = "ftp://127.0.0.1/mcp" }, "scheme must be http or https"},
		{"no host", func(c *Config) { c.Target = "http:///mcp" }, "has no host"},
		{"credentials", func(c *Config) { c.Target = "http://user:hunter2@127.0.0.1/mcp" }, "must not contain credentials"},
		{"public host", func(c *Config) { c.Target = "https://example.com/mcp" }, "not on this machine"},
		{"public ip", func(c *Config) { c.Target = "http://8.8.8.8/mcp" }, "not on this machine"},
		{"ramp too long", func(c *Config) { c.RampUp = c.Duration }, "ramp_up"},
		{"negative ramp", func(c *Config) { c.RampUp = -1 }, "ramp_up must be >= 0"},
		{"think inverted", func(c *Config) { c.ThinkMin = time.Second }, "think_max"},
		{"negative timeout", func(c *Config) { c.RequestTimeout = -time.Second }, "request_timeout"},
		{"tool without name", func(c *Config) { c.Tools = []ToolCall{{Name: " "}} }, "tools[0]: name is empty"},
		{"negative weight", func(c *Config) { c.Tools = []ToolCall{{Name: "a", Weight: -1}} }, "weight"},
		{"empty token", func(c *Config) { c.Tokens = []string{"ok", ""} }, "tokens[1] is empty"},
		{"token with newline", func(c *Config) { c.Tokens = []string{"abc\r\nX-Evil: 1"} }, "tokens[0] contains whitespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.mod(&c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error leaks a password: %v", err)
			}
		})
	}
	// Every problem is reported at once.
	err := Config{Target: "ftp://x"}.Validate()
	if err == nil || strings.Count(err.Error(), "\n") < 2 {
		t.Errorf("want all problems, got %v", err)
	}
}

func TestConfigJSON(t *testing.T) {
	c := Config{
		Target: "http://127.0.0.1:8080/mcp", Users: 50, Duration: 90 * time.Second,
		RampUp: 5 * time.Second, ThinkMin: 50 * time.Millisecond, ThinkMax: 200 * time.Millisecond,
		RequestTimeout: 10 * time.Second, ListToolsEvery: 3,
		Tools:  []ToolCall{{Name: "query", Arguments: map[string]any{"limit": 10.0}, Weight: 2}},
		Tokens: []string{"secret-token"}, Seed: 7,
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{`"duration":"1m30s"`, `"think_min":"50ms"`, `"ramp_up":"5s"`, `"list_tools_every":3`} {
		if !strings.Contains(s, want) {
			t.Errorf("%s lacks %s", s, want)
		}
	}
	if strings.Contains(s, "secret-token") || strings.Contains(s, "tokens") {
		t.Errorf("tokens serialized: %s", s)
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	c.Tokens = nil
	if !reflect.DeepEqual(back, c) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, c)
	}

	// Nanoseconds are accepted too; bad durations are reported.
	var n Config
	if err := json.Unmarshal([]byte(`{"duration":2000000000,"think_max":"1.5s"}`), &n); err != nil || n.Duration != 2*time.Second || n.ThinkMax != 1500*time.Millisecond {
		t.Errorf("got %+v, %v", n, err)
	}
	if err := json.Unmarshal([]byte(`{"duration":"soon"}`), &n); err == nil || !strings.Contains(err.Error(), "bad duration") {
		t.Errorf("bad duration: %v", err)
	}
}
