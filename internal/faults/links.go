package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Proxies are the Toxiproxy proxies of a stack's links: in this process
// (NewProxies, each listening on a free port of 127.0.0.1), or those of a
// Toxiproxy server elsewhere, driven through its HTTP API (Remote; the
// docker stack's faults container). Both put the same toxics on.
type Proxies struct {
	server *toxiproxy.ApiServer
	mu     sync.Mutex
	links  map[string]*toxiproxy.Proxy
	// remote, when set, is the server whose proxies these are; links is
	// then empty.
	remote *remoteAPI
}

// NewProxies makes an empty set of proxies; Add starts each link's.
func NewProxies() *Proxies {
	return &Proxies{
		server: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop()),
		links:  map[string]*toxiproxy.Proxy{},
	}
}

// Add starts link's proxy in front of upstream (host:port) on a free port
// of 127.0.0.1 and returns the address to dial instead of upstream.
func (p *Proxies) Add(link, upstream string) (string, error) {
	return p.AddAt(link, "127.0.0.1:0", upstream)
}

// AddAt is Add on the given listen address (host:port; port 0: a free
// one): for a service of the user's own, configured to dial it.
func (p *Proxies) AddAt(link, listen, upstream string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.remote != nil {
		return "", fmt.Errorf("fault link %s: the proxies are %s's, made when it started", link, p.remote.base)
	}
	if _, ok := p.links[link]; ok {
		return "", fmt.Errorf("fault link %s: already proxied", link)
	}
	px := toxiproxy.NewProxy(p.server, link, listen, upstream)
	if err := px.Start(); err != nil {
		return "", fmt.Errorf("start the %s link's proxy: %w", link, err)
	}
	p.links[link] = px
	return px.Listen, nil
}

// Has reports whether link is proxied.
func (p *Proxies) Has(link string) bool {
	if p == nil {
		return false
	}
	if p.remote != nil {
		_, ok := p.remote.listen[link]
		return ok
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.links[link]
	return ok
}

// Addr is the address link's proxy listens on ("" when not proxied); for a
// remote server's, as that server reports it.
func (p *Proxies) Addr(link string) string {
	if p == nil {
		return ""
	}
	if p.remote != nil {
		return p.remote.listen[link]
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if px, ok := p.links[link]; ok {
		return px.Listen
	}
	return ""
}

// AddToxic puts s's toxic on its link under name; RemoveToxic takes it off.
func (p *Proxies) AddToxic(name string, s Spec) error {
	if err := p.check(s.Link); err != nil {
		return err
	}
	body, err := json.Marshal(toxicJSON(name, s))
	if err != nil {
		return err
	}
	if p.remote != nil {
		if err := p.remote.addToxic(s.Link, body); err != nil {
			return fmt.Errorf("add %s to the %s link: %w", s.Toxic, s.Link, err)
		}
		return nil
	}
	px, err := p.proxy(s.Link)
	if err != nil {
		return err
	}
	if _, err := px.Toxics.AddToxicJson(bytes.NewReader(body)); err != nil {
		return fmt.Errorf("add %s to the %s link: %w", s.Toxic, s.Link, err)
	}
	return nil
}

// RemoveToxic takes toxic name off link.
func (p *Proxies) RemoveToxic(link, name string) error {
	if err := p.check(link); err != nil {
		return err
	}
	if p.remote != nil {
		if err := p.remote.removeToxic(link, name); err != nil {
			return fmt.Errorf("remove %s from the %s link: %w", name, link, err)
		}
		return nil
	}
	px, err := p.proxy(link)
	if err != nil {
		return err
	}
	if err := px.Toxics.RemoveToxic(context.Background(), name); err != nil {
		return fmt.Errorf("remove %s from the %s link: %w", name, link, err)
	}
	return nil
}

// check fails unless link is proxied, saying why.
func (p *Proxies) check(link string) error {
	if p == nil {
		return fmt.Errorf("fault link %s: the stack has no proxied links", link)
	}
	if !p.Has(link) {
		return fmt.Errorf("fault link %s: not proxied in this stack", link)
	}
	return nil
}

func (p *Proxies) proxy(link string) (*toxiproxy.Proxy, error) {
	if err := p.check(link); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.links[link], nil
}

// Close removes every toxic and stops every proxy, closing the
// connections through them. A remote server's proxies are its own: Close
// only removes their toxics (Toxiproxy's reset), so it must come while the
// server still runs. Safe on nil and more than once.
func (p *Proxies) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.remote != nil {
		return p.remote.close()
	}
	for name, px := range p.links {
		px.Toxics.ResetToxics(context.Background())
		px.Stop()
		delete(p.links, name)
	}
	return nil
}

// toxicJSON is s in Toxiproxy's API shape (times in milliseconds, the
// slicer's delay in microseconds).
func toxicJSON(name string, s Spec) map[string]any {
	attrs := map[string]any{}
	switch s.Toxic {
	case "latency":
		attrs["latency"] = s.Latency.Milliseconds()
		attrs["jitter"] = s.Jitter.Milliseconds()
	case "bandwidth":
		attrs["rate"] = s.RateKBps
	case "slow_close":
		attrs["delay"] = s.Delay.Milliseconds()
	case "timeout", "reset_peer":
		attrs["timeout"] = s.Timeout.Milliseconds()
	case "slicer":
		attrs["average_size"] = s.AverageSize
		attrs["size_variation"] = s.SizeVariation
		attrs["delay"] = s.Delay.Microseconds()
	case "limit_data":
		attrs["bytes"] = s.Bytes
	}
	tox := s.Toxicity
	if tox == 0 {
		tox = 1
	}
	return map[string]any{"name": name, "type": s.Toxic, "stream": s.stream(), "toxicity": tox, "attributes": attrs}
}
