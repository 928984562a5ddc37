package starter

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// What Init lists beside the tools, and how many of each it writes.
const (
	maxResources = 5  // resources/read branches
	maxPrompts   = 20 // prompts/get branches
)

// Init connects to o.Target, lists what the server offers and writes the
// starter scenario. Errors: ErrOptions (a usage error), ErrNotMCP, or
// what failed (connect, tools/list), wrapped. A resources/list or
// prompts/list that fails, a probe DSN that cannot be reached, are notes:
// the file is written without them.
func Init(ctx context.Context, o Options) (*Result, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	res := &Result{}
	c, err := connect(ctx, o)
	if err != nil {
		return nil, err
	}
	defer c.close()
	svc, err := c.discover(ctx, o, res)
	if err != nil {
		return nil, err
	}
	res.Service = svc
	if o.TryCalls {
		c.try(ctx, o, svc)
	}
	res.Notes = append(res.Notes, c.logs.notes...)
	if o.ProbeDSN != "" {
		db, err := checkDatabase(ctx, o.ProbeDSN)
		switch {
		case errors.Is(err, ErrOptions):
			return nil, err
		case err != nil:
			res.Notes = append(res.Notes, fmt.Sprintf("the probe DSN: %v", err))
			res.DatabaseErr = err.Error()
		default:
			res.Database = db
		}
	}
	res.YAML = render(o, res, time.Now())
	// The file must parse as every scenario file does, its probe section
	// too: a failure here is init's bug, said as such rather than written.
	var probe rundir.ProbeSettings
	if _, err := scenariofile.ParseWith(res.YAML, "the starter scenario", scenariofile.Options{NoInterpolation: true},
		scenariofile.Section{Key: "probe", Into: &probe}); err != nil {
		return nil, fmt.Errorf("init wrote a scenario that does not parse (a bug in leakbench init): %w", err)
	}
	res.Notes = append(res.Notes, summary(svc)...)
	return res, nil
}

// check validates the options and fills in defaults.
func (o *Options) check() error {
	if o.Target == "" {
		return fmt.Errorf("%w: no target: give the MCP endpoint's URL", ErrOptions)
	}
	u, err := url.Parse(o.Target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: target %q is not an http(s) URL (e.g. http://127.0.0.1:8080/mcp)", ErrOptions, truncate(o.Target, 80))
	}
	if u.User != nil {
		return fmt.Errorf("%w: the target URL holds credentials; give a bearer token instead", ErrOptions)
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.MaxTools <= 0 {
		o.MaxTools = DefaultMaxTools
	}
	for k := range o.Headers {
		if strings.EqualFold(k, "Authorization") {
			return fmt.Errorf("%w: give the bearer token as a token, not as an Authorization header", ErrOptions)
		}
	}
	return nil
}

// discover lists the tools (every page), resources and prompts.
func (c *conn) discover(ctx context.Context, o Options, res *Result) (*Service, error) {
	svc := &Service{}
	if ir := c.cs.InitializeResult(); ir != nil {
		svc.ProtocolVersion = ir.ProtocolVersion
		if ir.ServerInfo != nil {
			svc.ServerName, svc.ServerVersion = oneLine(ir.ServerInfo.Name, 60), oneLine(ir.ServerInfo.Version, 30)
		}
		if ir.Capabilities != nil {
			svc.HasResources, svc.HasPrompts = ir.Capabilities.Resources != nil, ir.Capabilities.Prompts != nil
		}
	}
	var err error
	svc.ToolsListed, svc.ToolsCut, err = c.listTools(ctx, func(t *sdk.Tool) bool {
		if t == nil || len(svc.Tools) == o.MaxTools {
			return true // counted, not kept: a server of thousands costs their count
		}
		tool := Tool{Name: t.Name, Description: oneLine(t.Description, 100)}
		tool.Arguments, tool.Optional, tool.TODO = arguments(t.InputSchema)
		if strings.Contains(t.Name, "{{") {
			tool.TODO = "its name holds {{, which the scenario language reads as a template"
		}
		svc.Tools = append(svc.Tools, tool)
		return true
	})
	if err != nil {
		return nil, err
	}
	if svc.HasResources {
		if svc.Resources, err = c.listResources(ctx, maxResources); err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("%v: no resources/read written", err))
			svc.HasResources = false
		}
	}
	if svc.HasPrompts {
		if svc.Prompts, err = c.listPrompts(ctx, maxPrompts); err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("%v: no prompts/get written", err))
			svc.HasPrompts = false
		}
	}
	return svc, nil
}

// summary is what Init tells its user about the file.
func summary(svc *Service) []string {
	var out []string
	guessed := 0
	failed := 0
	for _, t := range svc.Tools {
		if t.Guessed() {
			guessed++
		}
		if t.Failed != "" {
			failed++
		}
	}
	line := fmt.Sprintf("%d tools listed, %d written", svc.ToolsListed, len(svc.Tools))
	if svc.ToolsCut {
		line += " (the listing stopped at its bound)"
	}
	out = append(out, line)
	if guessed > 0 {
		out = append(out, fmt.Sprintf("%d tools have arguments marked # TODO: guesses the schema could not settle; replace them", guessed))
	}
	if failed > 0 {
		out = append(out, fmt.Sprintf("%d tools failed when tried: written commented out, with the answer", failed))
	}
	return out
}

// WriteFile writes data to path, never replacing a file unless force (a
// replacement is atomic: a temporary file renamed over it). ErrExists
// when the file is there. Path "-" is not handled here: the caller
// writes its standard output.
func WriteFile(path string, data []byte, force bool) error {
	if !force {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%w: %s; give --force to replace it, or another --out", ErrExists, path)
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			os.Remove(path)
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			os.Remove(path)
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".leakbench-init-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
