package history

import (
	"context"
	"os/exec"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/lib/redact"
)

// Where a release label came from.
const (
	ReleaseFlag    = "flag"
	ReleaseEnv     = "env"
	ReleaseGit     = "git"
	ReleaseUnknown = "unknown"
)

// ReleaseEnvVar names the build under test when --release is not given.
const ReleaseEnvVar = "LEAKBENCH_RELEASE"

// ResolveRelease names the build of the service under test: flag when it
// is set, else $LEAKBENCH_RELEASE, else `git describe --always --dirty
// --tags` of dir when dir is inside a git work tree, else "unknown". It
// returns the label and its source (ReleaseFlag, …). Labels are redacted
// (a URL with a token in it stays out of the history) and cut to 200
// bytes.
func ResolveRelease(ctx context.Context, flag, dir string) (label, source string) {
	if v := strings.TrimSpace(flag); v != "" {
		return cleanLabel(v), ReleaseFlag
	}
	if v := strings.TrimSpace(getenv(ReleaseEnvVar)); v != "" {
		return cleanLabel(v), ReleaseEnv
	}
	if v := gitDescribe(ctx, dir); v != "" {
		return cleanLabel(v), ReleaseGit
	}
	return "unknown", ReleaseUnknown
}

func cleanLabel(s string) string {
	s = strings.Join(strings.Fields(redact.String(s)), " ")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// gitDescribe is `git describe --always --dirty --tags` in dir, or "" when
// git is missing, dir is no repository, or git takes longer than 5 s.
func gitDescribe(ctx context.Context, dir string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty", "--tags")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
