package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/leakbench/leakbench/internal/lib/redact"
)

// Env defines flags whose defaults come from LEAKBENCH_* environment
// variables (how containers are configured). A malformed variable is a
// usage error, reported by Err after parsing, never silently ignored.
type Env struct {
	fs        *flag.FlagSet
	lookupEnv func(string) (string, bool) // the command's environment
	errs      []error
}

// NewEnv defines flags on fs whose defaults lookupEnv gives (as
// os.LookupEnv: the value and whether the variable is set).
func NewEnv(fs *flag.FlagSet, lookupEnv func(string) (string, bool)) *Env {
	return &Env{fs: fs, lookupEnv: lookupEnv}
}

// lookup returns the variable's value and whether it is set, and adds the
// variable's name to the flag's help text.
func (e *Env) lookup(env string, usage *string) (string, bool) {
	*usage += " (env " + env + ")"
	return e.lookupEnv(env)
}

// bad records a variable that does not parse as its flag's type.
func (e *Env) bad(env, v string, err error) {
	e.errs = append(e.errs, fmt.Errorf("environment variable %s=%q: %w", env, v, err))
}

// String defines a string flag whose default is env's value when it is
// set. The default shows redacted in help.
func (e *Env) String(name, env, def, usage string) *string {
	def = fromEnv(e, env, &usage, def, func(s string) (string, error) { return s, nil })
	v := e.fs.String(name, def, usage)
	// --help prints defaults: one taken from the environment may carry a
	// credential (a URL's userinfo), so it is shown redacted.
	e.fs.Lookup(name).DefValue = redact.String(def)
	return v
}

// fromEnv is def, or env's value parsed when it is set (and a recorded
// error, def kept, when it does not parse): the one parser every typed
// flag below shares.
func fromEnv[T any](e *Env, env string, usage *string, def T, parse func(string) (T, error)) T {
	v, ok := e.lookup(env, usage)
	if !ok {
		return def
	}
	x, err := parse(v)
	if err != nil {
		e.bad(env, v, err)
		return def
	}
	return x
}

// Int defines an int flag whose default is env's value when it is set.
func (e *Env) Int(name, env string, def int, usage string) *int {
	def = fromEnv(e, env, &usage, def, strconv.Atoi)
	return e.fs.Int(name, def, usage)
}

// Int64 defines an int64 flag whose default is env's value when it is set.
func (e *Env) Int64(name, env string, def int64, usage string) *int64 {
	def = fromEnv(e, env, &usage, def, func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) })
	return e.fs.Int64(name, def, usage)
}

// Uint64 defines a uint64 flag whose default is env's value when it is
// set.
func (e *Env) Uint64(name, env string, def uint64, usage string) *uint64 {
	def = fromEnv(e, env, &usage, def, func(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) })
	return e.fs.Uint64(name, def, usage)
}

// Float64 defines a float64 flag whose default is env's value when it is
// set.
func (e *Env) Float64(name, env string, def float64, usage string) *float64 {
	def = fromEnv(e, env, &usage, def, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
	return e.fs.Float64(name, def, usage)
}

// Duration defines a duration flag whose default is env's value when it
// is set.
func (e *Env) Duration(name, env string, def time.Duration, usage string) *time.Duration {
	def = fromEnv(e, env, &usage, def, time.ParseDuration)
	return e.fs.Duration(name, def, usage)
}

// Bool defines a bool flag whose default is env's value when it is set.
func (e *Env) Bool(name, env string, def bool, usage string) *bool {
	def = fromEnv(e, env, &usage, def, strconv.ParseBool)
	return e.fs.Bool(name, def, usage)
}

// Err returns the environment errors as one usage error.
func (e *Env) Err() error {
	if len(e.errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrUsage, errors.Join(e.errs...))
}
