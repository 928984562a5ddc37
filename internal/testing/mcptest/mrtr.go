package mcptest

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Multi round-trip requests (basic/patterns/mrtr, 2026-07-28): the tool
// ask (and the prompt ask_prompt) needs the user's name; without it the
// answer is an input_required result with an elicitation and a
// requestState, and the retry carries the elicitation's result and the
// state echoed. The state is signed, not stored: the retry may reach any
// server instance, and a client that alters it (or presents it for
// another request) is caught.

const (
	inputKey   = "user_name"
	stateLife  = 5 * time.Minute
	askMessage = "What is your name?"
)

// ask answers target (e.g. "tools/call ask"), calling done with the name
// once the retry brings it.
func (s *handWritten) ask(c *call, target string, done func(name string) map[string]any) (map[string]any, *rpcError) {
	if !c.caps.elicitation() {
		return nil, &rpcError{Code: codeMissingCapabilities, Message: "Server requires the elicitation capability for this request",
			Data: map[string]any{"requiredCapabilities": map[string]any{"elicitation": map[string]any{}}}}
	}
	var p struct {
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   *string                    `json:"requestState"`
	}
	if err := json.Unmarshal(c.req.Params, &p); err != nil {
		return nil, &rpcError{Code: codeInvalidParams, Message: "malformed params: " + err.Error()}
	}
	if p.RequestState == nil {
		if p.InputResponses != nil {
			return nil, &rpcError{Code: codeInvalidParams, Message: "inputResponses without requestState: the retry must echo the requestState of the input_required result"}
		}
		return s.askForInput(target), nil
	}
	if problem := s.checkState(*p.RequestState, target); problem != "" {
		return nil, &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("requestState %q %s", truncate(*p.RequestState, 80), problem)}
	}
	raw, ok := p.InputResponses[inputKey]
	if !ok {
		// The spec: ask again rather than fail when the input is missing.
		return s.askForInput(target), nil
	}
	var er struct {
		Action  string `json:"action"`
		Content struct {
			Name string `json:"name"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &er); err != nil {
		return nil, &rpcError{Code: codeInvalidParams, Message: "inputResponses." + inputKey + " is not an ElicitResult: " + err.Error()}
	}
	switch {
	case er.Action == "decline" || er.Action == "cancel":
		if strings.HasPrefix(target, "tools/call") {
			res := textResult("no name given (" + er.Action + ")")
			res["isError"] = true
			return res, nil
		}
		return nil, &rpcError{Code: codeInvalidParams, Message: "no name given (" + er.Action + ")"}
	case er.Action != "accept":
		return nil, &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("inputResponses.%s.action %q is not accept, decline or cancel", inputKey, er.Action)}
	case er.Content.Name == "":
		return nil, &rpcError{Code: codeInvalidParams, Message: "inputResponses." + inputKey + ".content.name is missing (the requestedSchema requires it)"}
	}
	s.inputCompleted.Add(1)
	return done(er.Content.Name), nil
}

// askForInput is the interim result asking for the name; not cacheable,
// so no caching hints.
func (s *handWritten) askForInput(target string) map[string]any {
	s.inputRequired.Add(1)
	return map[string]any{
		"resultType": "input_required",
		"inputRequests": map[string]any{inputKey: map[string]any{
			"method": "elicitation/create",
			"params": map[string]any{"mode": "form", "message": askMessage, "requestedSchema": map[string]any{
				"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}}},
		}},
		"requestState": s.makeState(target),
	}
}

// A requestState is payload "." signature, the payload a random nonce
// (fresh per input_required, so that no two are alike), the request it is
// for and its expiry, all base64url.
func (s *handWritten) makeState(target string) string {
	nonce := make([]byte, 12)
	_, _ = rand.Read(nonce)
	payload := base64.RawURLEncoding.EncodeToString([]byte(hex.EncodeToString(nonce) + "|" + target + "|" +
		time.Now().Add(stateLife).UTC().Format(time.RFC3339)))
	return payload + "." + s.sign(payload)
}

func (s *handWritten) sign(payload string) string {
	m := hmac.New(sha256.New, s.stateKey)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkState says what is wrong with a requestState presented for target
// ("" if nothing).
func (s *handWritten) checkState(state, target string) string {
	payload, sig, ok := strings.Cut(state, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(s.sign(payload))) {
		return "is not one this server issued (altered, or not echoed exactly)"
	}
	b, _ := base64.RawURLEncoding.DecodeString(payload)
	parts := strings.Split(string(b), "|")
	if len(parts) != 3 {
		return "is malformed"
	}
	if parts[1] != target {
		return fmt.Sprintf("was issued for %s, not %s", parts[1], target)
	}
	if exp, err := time.Parse(time.RFC3339, parts[2]); err != nil || time.Now().After(exp) {
		return "has expired"
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
