package verdict

import (
	"errors"
	"fmt"
	"strings"
)

// Mode is the question a comparison of two runs answers. There are two,
// and a comparison always names the one it asked: a healthy main branch
// compared with a healthy pull request fails the fix question (nothing
// leaked before, so the test could not see the leak) and passes the
// regression question.
type Mode string

const (
	// ModeFix asks "does the fix make the leak go away": before must show
	// the leak (so the test can see one at all) and after must not.
	ModeFix Mode = "fix"
	// ModeRegression asks "is after no worse than before": no leaked or
	// held session, and no pinned pool, where before had none, and the
	// figures (stuck sessions, pool pinned time, release p99, pool wait,
	// error rate, latency) not worse than before beyond the noise rules.
	ModeRegression Mode = "regression"
)

// ErrMode is a verdict mode that is missing or unknown: a usage error.
var ErrMode = errors.New("verdict mode")

// Modes are the verdict modes, in the order the usage lists them.
func Modes() []Mode { return []Mode{ModeFix, ModeRegression} }

// Question says in one line what the mode asks.
func (m Mode) Question() string {
	switch m {
	case ModeFix:
		return "fix: before must show the leak, after must not"
	case ModeRegression:
		return "regression: after must be no worse than before (no leaked or held session, no pinned pool where before had none; stuck sessions, pool pinned time, release p99, pool wait, error rate and latency within the noise rules)"
	}
	return string(m) + ": unknown mode"
}

// ParseMode reads a mode's name. An empty or unknown name is ErrMode, and
// the error names both modes and what each asks, so that a user who left
// --mode out learns the choice rather than getting a silent default.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes() {
		if strings.EqualFold(strings.TrimSpace(s), string(m)) {
			return m, nil
		}
	}
	var want []string
	for _, m := range Modes() {
		want = append(want, fmt.Sprintf("%q (%s)", m, m.Question()))
	}
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("%w: none given; want %s", ErrMode, strings.Join(want, " or "))
	}
	return "", fmt.Errorf("%w %q: want %s", ErrMode, s, strings.Join(want, " or "))
}
