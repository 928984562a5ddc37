package gateway

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Document and prompt queries.
const (
	sqlTeamDocuments = `SELECT team_documents.team_id, team_documents.slug, team_documents.title, team_documents.mime_type
FROM team_documents WHERE team_documents.team_id = ANY($1)`

	sqlTeamDocument = `SELECT team_documents.title, team_documents.mime_type, team_documents.body
FROM team_documents WHERE team_documents.team_id = $1 AND team_documents.slug = $2`

	sqlRecentNotes = `SELECT tool_invocations.note, tool_invocations.created_at FROM tool_invocations
WHERE tool_invocations.user_email = $1 AND tool_invocations.note IS NOT NULL
ORDER BY tool_invocations.id DESC LIMIT $2`
)

// Team documents are addressed as leakbench://teams/{team}/documents/{slug}.
const (
	documentURIPrefix   = "leakbench://teams/"
	documentURITemplate = documentURIPrefix + "{team}/documents/{slug}"
)

func documentURI(team int64, slug string) string {
	return documentURIPrefix + strconv.FormatInt(team, 10) + "/documents/" + slug
}

// parseDocumentURI is documentURI's inverse.
func parseDocumentURI(uri string) (team int64, slug string, ok bool) {
	rest, ok := strings.CutPrefix(uri, documentURIPrefix)
	if !ok {
		return 0, "", false
	}
	teamStr, slug, ok := strings.Cut(rest, "/documents/")
	if !ok || slug == "" || strings.Contains(slug, "/") {
		return 0, "", false
	}
	team, err := strconv.ParseInt(teamStr, 10, 64)
	return team, slug, err == nil
}

// addResources registers the team-document template; resources/list is
// served per caller by registryMiddleware.
func (g *Gateway) addResources(s *mcp.Server) {
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "team-document", URITemplate: documentURITemplate,
		Description: "A document of one of the caller's teams (handbook, tool catalogue)."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			sc, err := scopeOf(req)
			if err != nil {
				return nil, err
			}
			uri := req.Params.URI
			team, slug, ok := parseDocumentURI(uri)
			// Another team's document is "not found", not "forbidden": the
			// answer must not tell which teams exist.
			if !ok || !slices.Contains(sc.Teams, team) {
				return nil, mcp.ResourceNotFoundError(uri)
			}
			var title, mime, body string
			var found bool
			err = g.withSession(ctx, func(sess *Session) (err error) {
				found, err = sess.QueryRow(ctx, sqlTeamDocument, []any{team, slug}, &title, &mime, &body)
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", uri, err)
			}
			if !found {
				return nil, mcp.ResourceNotFoundError(uri)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: body}}}, nil
		})
}

// listResources lists the caller's teams' documents, ordered by URI.
func (g *Gateway) listResources(ctx context.Context, next mcp.MethodHandler, req *mcp.ListResourcesRequest) (mcp.Result, error) {
	var params mcp.ListResourcesParams // the request as sent, its _meta included
	if req.Params != nil {
		params = *req.Params
	}
	after, sc, err := listScope(req, params.Cursor)
	if err != nil {
		return nil, err
	}
	// go-sdk's own answer (no static resources) carries the fields it fills.
	params.Cursor = ""
	res, err := next(ctx, "resources/list", &mcp.ListResourcesRequest{Session: req.Session, Extra: req.Extra, Params: &params})
	if err != nil {
		return nil, err
	}
	var docs []*mcp.Resource
	err = g.withSession(ctx, func(sess *Session) error {
		var team int64
		var slug, title, mime string
		return sess.QueryRows(ctx, sqlTeamDocuments, []any{sc.Teams}, []any{&team, &slug, &title, &mime}, func() error {
			docs = append(docs, &mcp.Resource{URI: documentURI(team, slug), Name: fmt.Sprintf("team-%d-%s", team, slug), Title: title, MIMEType: mime})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("resources/list: read team documents: %w", err)
	}
	out := res.(*mcp.ListResourcesResult)
	out.Resources, out.NextCursor = paginate(docs, func(r *mcp.Resource) string { return r.URI }, after, g.cfg.PageSize)
	out.CacheScope = "private"
	return out, nil
}

// addPrompts registers the prompts. prompts/list is go-sdk's own (the
// prompts are the same for everyone); prompts/get reads the database.
func (g *Gateway) addPrompts(s *mcp.Server) {
	s.AddPrompt(&mcp.Prompt{Name: "team_briefing", Description: "Brief a model on one of the caller's teams: its handbook and tool catalogue.",
		Arguments: []*mcp.PromptArgument{{Name: "team_id", Description: "the team's id (one of the caller's teams)", Required: true}}},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			sc, err := scopeOf(req)
			if err != nil {
				return nil, err
			}
			team, err := strconv.ParseInt(req.Params.Arguments["team_id"], 10, 64)
			if err != nil || !slices.Contains(sc.Teams, team) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
					Message: fmt.Sprintf("argument team_id %q: want the id of one of your teams", req.Params.Arguments["team_id"])}
			}
			var text strings.Builder
			err = g.withSession(ctx, func(sess *Session) error {
				for _, slug := range []string{"handbook", "tools"} {
					var title, mime, body string
					if _, err := sess.QueryRow(ctx, sqlTeamDocument, []any{team, slug}, &title, &mime, &body); err != nil {
						return err
					}
					fmt.Fprintf(&text, "## %s\n\n%s\n\n", title, body)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("prompts/get team_briefing: %w", err)
			}
			return &mcp.GetPromptResult{Description: fmt.Sprintf("Briefing on team %d", team),
				Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "You are helping this team.\n\n" + text.String()}}}}, nil
		})

	s.AddPrompt(&mcp.Prompt{Name: "recent_notes", Description: "Summarize the caller's most recent notes (written with record_note).",
		Arguments: []*mcp.PromptArgument{{Name: "limit", Description: "how many notes, 1 to 50 (default 5)"}}},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			sc, err := scopeOf(req)
			if err != nil {
				return nil, err
			}
			limit := 5
			if s, ok := req.Params.Arguments["limit"]; ok {
				if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > 50 {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("argument limit %q: want 1 to 50", s)}
				}
			}
			var text strings.Builder
			err = g.withSession(ctx, func(sess *Session) error {
				var note string
				var at time.Time
				return sess.QueryRows(ctx, sqlRecentNotes, []any{sc.Email, limit}, []any{&note, &at}, func() error {
					fmt.Fprintf(&text, "- %s: %s\n", at.UTC().Format(time.RFC3339), note)
					return nil
				})
			})
			if err != nil {
				return nil, fmt.Errorf("prompts/get recent_notes: %w", err)
			}
			if text.Len() == 0 {
				text.WriteString("(no notes yet)\n")
			}
			return &mcp.GetPromptResult{Description: "Your recent notes",
				Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Summarize these notes:\n\n" + text.String()}}}}, nil
		})
}
