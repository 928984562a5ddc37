package cliflag

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxSecretFile bounds what a --NAME-file may hold: one DSN or token.
const maxSecretFile = 64 << 10

// Secret is a flag whose value is a secret (a DSN with a password, a
// token). It can be given three ways — --NAME VALUE, --NAME-file FILE (its
// first line), or the environment variable env — because a command line
// shows in ps and shell history while a file or the environment does not.
// Its value never appears as a default in --help, whatever the
// environment holds.
type Secret struct {
	// Name is the flag's name as the messages give it; a command that
	// registers the flags again under a prefix (a sign-off's
	// --before-probe-dsn) renames it to match.
	Name        string
	env         string
	value, file string
	// Getenv reads the environment (nil: os.Getenv); a command sets its
	// own, so that tests give the environment as a value.
	Getenv func(string) string
}

// NewSecret defines --name, --name-file and any aliases of --name
// (older spellings kept working) on fs.
func NewSecret(fs *flag.FlagSet, name, env, usage string, aliases ...string) *Secret {
	s := &Secret{Name: name, env: env}
	how := fmt.Sprintf("%s (or --%s-file FILE, or env %s: a command line shows in ps)", usage, name, env)
	if env == "" {
		how = fmt.Sprintf("%s (or --%s-file FILE: a command line shows in ps)", usage, name)
	}
	fs.StringVar(&s.value, name, "", how)
	fs.StringVar(&s.file, name+"-file", "", "read --"+name+" from the first line of `FILE`")
	for _, a := range aliases {
		Alias(fs, a, name) // hidden from help
	}
	return s
}

// Value returns the secret: the flag's value, else the file's first line,
// else the environment's. Giving both the flag and the file is an error.
func (s *Secret) Value() (string, error) {
	switch {
	case s.value != "" && s.file != "":
		return "", fmt.Errorf("%w: give --%s or --%s-file, not both", ErrUsage, s.Name, s.Name)
	case s.value != "":
		return s.value, nil
	case s.file != "":
		return readSecretFile(s.file, "--"+s.Name+"-file")
	case s.env != "" && s.Getenv != nil:
		return s.Getenv(s.env), nil
	case s.env != "":
		return os.Getenv(s.env), nil
	}
	return "", nil
}

// Given: the secret was given on the command line (as a value or a file),
// not only found in the environment.
func (s *Secret) Given() bool { return s.value != "" || s.file != "" }

// Sources names where the secret may come from, for "is required" errors.
func (s *Secret) Sources() string {
	if s.env == "" {
		return fmt.Sprintf("--%s or --%s-file", s.Name, s.Name)
	}
	return fmt.Sprintf("--%s, --%s-file or %s", s.Name, s.Name, s.env)
}

// readSecretFile reads the first non-empty line of path.
func readSecretFile(path, what string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrUsage, what, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return "", fmt.Errorf("%w: %s: read %s: %w", ErrUsage, what, path, err)
	}
	if len(data) > maxSecretFile {
		return "", fmt.Errorf("%w: %s: %s is larger than %d KiB; it should hold one line", ErrUsage, what, path, maxSecretFile>>10)
	}
	for line := range strings.Lines(string(data)) {
		if v := strings.TrimSpace(line); v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("%w: %s: %s is empty", ErrUsage, what, path)
}
