package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool queries.
const (
	sqlTeamTools = `SELECT tools.name, tools.description FROM tools
WHERE tools.team_id = ANY($1) ORDER BY tools.name LIMIT 100`

	sqlReport = `SELECT pg_sleep($1), count(*) FROM tool_invocations WHERE user_email = $2`

	sqlRecordNote = `INSERT INTO tool_invocations (user_email, tool_name, note) VALUES ($1, $2, $3)`
)

type teamToolsOut struct {
	Tools []teamTool `json:"tools"`
}

type teamTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

type reportIn struct {
	Seconds float64 `json:"seconds" jsonschema:"how long the report takes to compute, in seconds (0 to 30)"`
}

type reportOut struct {
	Invocations int64 `json:"invocations"`
}

type noteIn struct {
	Note string `json:"note" jsonschema:"free text to record (at most 1000 characters)"`
}

type noteOut struct {
	Recorded bool `json:"recorded"`
}

// errNoScope means a request ran without token scoping: a wiring bug.
var errNoScope = errors.New("no token scope on the request")

// scopeOf returns the token scope of an MCP request.
func scopeOf(req mcp.Request) (*Scope, error) {
	extra := req.GetExtra()
	if extra == nil || extra.TokenInfo == nil {
		return nil, errNoScope
	}
	sc, ok := extra.TokenInfo.Extra["scope"].(*Scope)
	if !ok {
		return nil, errNoScope
	}
	return sc, nil
}

// addTool registers a built-in tool and notes its name, so that the
// registry middleware can tell built-in tools from registered ones.
func addTool[In, Out any](s *mcp.Server, builtin map[string]bool, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	builtin[t.Name] = true
	mcp.AddTool(s, t, h)
}

// withSession runs fn in its own unit of work, commits, and always closes
// it — on every path, before the caller does anything else: this is how
// the fixed code paths hold a connection only while they use it.
func (g *Gateway) withSession(ctx context.Context, fn func(*Session) error) error {
	sess, err := g.store.NewSession(ctx)
	if err != nil {
		return err
	}
	defer sess.Detach()
	defer sess.Close()
	if err := fn(sess); err != nil {
		return err
	}
	return sess.Commit(ctx)
}

// addTools registers the gateway's built-in, database-backed tools.
func (g *Gateway) addTools(s *mcp.Server, builtin map[string]bool) {
	g.addRunTools(s, builtin)
	g.addUpstreamTool(s, builtin)

	addTool(s, builtin, &mcp.Tool{Name: "get_team_tools", Description: "List the tools registered for the caller's teams (a read)."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, teamToolsOut, error) {
			var out teamToolsOut
			sc, err := scopeOf(req)
			if err != nil {
				return nil, out, err
			}
			err = g.withSession(ctx, func(sess *Session) error {
				var t teamTool
				return sess.QueryRows(ctx, sqlTeamTools, []any{sc.Teams}, []any{&t.Name, &t.Description}, func() error {
					out.Tools = append(out.Tools, t)
					return nil
				})
			})
			if err != nil {
				return nil, out, fmt.Errorf("read team tools: %w", err)
			}
			return nil, out, nil
		})

	addTool(s, builtin, &mcp.Tool{Name: "generate_report", Description: "Compute a report on the caller's activity; takes `seconds` of database time (a slow read)."},
		func(ctx context.Context, req *mcp.CallToolRequest, in reportIn) (*mcp.CallToolResult, reportOut, error) {
			var out reportOut
			sc, err := scopeOf(req)
			if err != nil {
				return nil, out, err
			}
			if in.Seconds < 0 || in.Seconds > 30 {
				return nil, out, fmt.Errorf("seconds must be between 0 and 30, got %g", in.Seconds)
			}
			err = g.withSession(ctx, func(sess *Session) error {
				var slept any
				_, err := sess.QueryRow(ctx, sqlReport, []any{in.Seconds, sc.Email}, &slept, &out.Invocations)
				return err
			})
			if err != nil {
				return nil, out, fmt.Errorf("generate report: %w", err)
			}
			return nil, out, nil
		})

	addTool(s, builtin, &mcp.Tool{Name: "record_note", Description: "Record a note for the caller (a write)."},
		func(ctx context.Context, req *mcp.CallToolRequest, in noteIn) (*mcp.CallToolResult, noteOut, error) {
			var out noteOut
			sc, err := scopeOf(req)
			if err != nil {
				return nil, out, err
			}
			if len(in.Note) > 1000 {
				return nil, out, fmt.Errorf("note is %d characters, at most 1000 allowed", len(in.Note))
			}
			err = g.withSession(ctx, func(sess *Session) error {
				_, err := sess.Exec(ctx, sqlRecordNote, sc.Email, "record_note", in.Note)
				return err
			})
			out.Recorded = err == nil
			if err != nil {
				return nil, out, fmt.Errorf("record note: %w", err)
			}
			return nil, out, nil
		})
}
