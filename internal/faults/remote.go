package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// apiTimeout bounds each call to a remote Toxiproxy API. Toxiproxy 2.5's
// own client has no timeout at all: a server that stopped answering would
// hang the fault player, and with it the end of the run.
const apiTimeout = 10 * time.Second

// Remote controls the proxies of the Toxiproxy server whose HTTP API is at
// api (http://host:port) — the docker stack's faults container, which runs
// `leakbench faultproxy` — with the same toxics NewProxies' would get. The
// server's proxies are read once, here: they are fixed when it starts.
func Remote(ctx context.Context, api string) (*Proxies, error) {
	u, err := url.Parse(api)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("toxiproxy API %q: want http://HOST:PORT", api)
	}
	r := &remoteAPI{base: strings.TrimRight(api, "/"), http: &http.Client{Timeout: apiTimeout}}
	var proxies map[string]struct {
		Listen string `json:"listen"`
	}
	if err := r.call(ctx, http.MethodGet, "/proxies", nil, http.StatusOK, &proxies); err != nil {
		return nil, fmt.Errorf("list the proxies of the toxiproxy server at %s: %w", r.base, err)
	}
	r.listen = map[string]string{}
	for name, px := range proxies {
		r.listen[name] = px.Listen
	}
	return &Proxies{remote: r}, nil
}

// remoteAPI is a Toxiproxy server's HTTP API, called directly rather than
// through its client package so that every call has a deadline.
type remoteAPI struct {
	base   string
	http   *http.Client
	listen map[string]string // proxy name → its listen address, as the server reports it
	// mu makes close wait for a call under way, so that no toxic is put
	// on after the reset.
	mu     sync.Mutex
	closed bool
}

// addToxic posts body (toxicJSON's, the same as the in-process proxies
// get) to link's proxy.
func (r *remoteAPI) addToxic(link string, body []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errors.New("the proxies are closed")
	}
	return r.call(context.Background(), http.MethodPost, "/proxies/"+url.PathEscape(link)+"/toxics", body, http.StatusOK, nil)
}

func (r *remoteAPI) removeToxic(link, name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errors.New("the proxies are closed")
	}
	return r.call(context.Background(), http.MethodDelete, "/proxies/"+url.PathEscape(link)+"/toxics/"+url.PathEscape(name), nil, http.StatusNoContent, nil)
}

// close takes every toxic off every proxy of the server (and enables any
// disabled one: Toxiproxy's reset), once.
func (r *remoteAPI) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	defer r.http.CloseIdleConnections()
	if err := r.call(context.Background(), http.MethodPost, "/reset", nil, http.StatusNoContent, nil); err != nil {
		return fmt.Errorf("remove the toxics of the toxiproxy server at %s: %w", r.base, err)
	}
	return nil
}

// call sends one request and fails unless the answer has status want;
// Toxiproxy's error message, when it sends one, is the error. With out the
// answer's JSON is decoded into it.
func (r *remoteAPI) call(ctx context.Context, method, path string, body []byte, want int, out any) error {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if resp.StatusCode != want {
		var apiErr struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &apiErr) == nil && apiErr.Error != "" {
			return fmt.Errorf("%s %s: %s (%s)", method, path, apiErr.Error, resp.Status)
		}
		return fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: the answer is not Toxiproxy's JSON: %w", method, path, err)
		}
	}
	return nil
}
