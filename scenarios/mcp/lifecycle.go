package mcp

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
)

// Initialize starts the session as its protocol setting says ([Session.Pin],
// ClientOptions.ProtocolVersion):
//   - "" or a pinned 2025 version: the initialize handshake, then
//     notifications/initialized ([Era2025]);
//   - [Version20260728]: server/discover, which must offer 2026-07-28;
//     nothing else is sent, there is no session to open ([Era2026]);
//   - [VersionAuto]: server/discover; 2026-07-28 when the server offers
//     it, else — a legacy server's answer to a method it does not know,
//     or a discover result without 2026-07-28 — the handshake, asking for
//     the newest 2025 version.
//
// Calling it again starts anew (after a 404, see [ErrSessionExpired]); the
// old session is not closed.
func (s *Session) Initialize(ctx context.Context) error {
	s.id, s.version, s.era, s.meta = "", "", EraNone, nil
	switch {
	case s.pin == VersionAuto:
		modern, err := s.discoverEra(ctx, true)
		if err != nil || modern {
			return err
		}
		return s.handshake(ctx, newest2025, false)
	case s.pin == Version20260728:
		_, err := s.discoverEra(ctx, false)
		return err
	case s.pin != "":
		return s.handshake(ctx, s.pin, true)
	}
	return s.handshake(ctx, ProtocolVersion, false)
}

// newest2025 is the version the auto setting's handshake asks for, as
// go-sdk's client does when it falls back.
var newest2025 = SupportedVersions[len(SupportedVersions)-1]

// handshake performs the 2025 initialize handshake asking for want; when
// pinned, the server must agree to it, else any of [SupportedVersions]
// will do.
func (s *Session) handshake(ctx context.Context, want string, pinned bool) error {
	const op = methodInitialize
	params := make([]byte, 0, 160)
	params = append(params, `{"protocolVersion":`...)
	params = textutil.AppendJSONString(params, want)
	params = append(params, `,"capabilities":{},"clientInfo":{"name":`...)
	params = textutil.AppendJSONString(params, s.c.info.Name)
	params = append(params, `,"version":`...)
	params = textutil.AppendJSONString(params, s.c.info.Version)
	params = append(params, "}}"...)
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	sid, err := s.call(ctx, op, "", params, &res)
	if err != nil {
		return err
	}
	switch got := res.ProtocolVersion; {
	case pinned && got != want:
		return &Error{Kind: KindProtocol, Op: op, Msg: s.redact(fmt.Sprintf("server chose protocol version %q; the scenario pins %q", textutil.Truncate(got, 32), want))}
	case !acceptedVersions[got]:
		return &Error{Kind: KindProtocol, Op: op, Msg: s.redact(fmt.Sprintf("server chose unsupported protocol version %q", textutil.Truncate(got, 32)))}
	}
	s.id = sid
	if strings.IndexFunc(s.id, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
		s.id = ""
		return &Error{Kind: KindProtocol, Op: op, Msg: "Mcp-Session-Id holds characters outside visible ASCII"}
	}
	s.version, s.era = res.ProtocolVersion, Era2025
	return s.notify(ctx, op, "notifications/initialized")
}

// Close ends the session with an HTTP DELETE. A server that does not allow
// it (405) or has already forgotten the session (404) is not an error. A
// session without an id (a stateless server, the 2026-07-28 era) has
// nothing to close.
func (s *Session) Close(ctx context.Context) error {
	const op = "close"
	defer func() { s.id, s.version, s.era, s.meta = "", "", EraNone, nil }()
	if s.id == "" {
		return nil
	}
	resp, _, err := s.send(ctx, op, http.MethodDelete, nil, false)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	drain(resp.Body)
	switch {
	case resp.StatusCode/100 == 2, resp.StatusCode == http.StatusMethodNotAllowed, resp.StatusCode == http.StatusNotFound:
		return nil
	}
	return s.statusError(op, resp)
}

// notify sends a JSON-RPC notification; the server must answer 202 Accepted.
func (s *Session) notify(ctx context.Context, op, method string) error {
	body := []byte(`{"jsonrpc":"2.0","method":"` + method + `"}`)
	resp, _, err := s.send(ctx, op, http.MethodPost, body, true)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	drain(resp.Body)
	switch {
	case resp.StatusCode == http.StatusAccepted:
		return nil
	case resp.StatusCode/100 == 2:
		return &Error{Kind: KindProtocol, Op: op, Msg: fmt.Sprintf("%s: want 202 Accepted, got %d", method, resp.StatusCode)}
	}
	return s.statusError(op, resp)
}
