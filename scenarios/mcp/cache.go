package mcp

import (
	"time"

	"github.com/tidwall/gjson"
)

// Caching (MCP 2026-07-28, SEP-2549): list and resources/read results
// carry ttlMs, how long the client may consider them fresh, and
// cacheScope. Real clients re-fetch a list only once it is stale, so a
// load test that lists on every pass would send a load no real client
// sends. With SetCache(true) a session keeps, per user, when each
// listing (the whole of its pages) and each resource it read goes stale,
// and serves a fresh one from that without a request; Cached tells the
// caller. Only expiry times are kept, not the results: the client needs
// nothing of them. The cache is per user, so a private cacheScope is
// honoured as a public one: one user, one authorization context.

// maxCacheEntries bounds a user's cache: templated resource URIs could
// otherwise grow it without bound. When full it starts over.
const maxCacheEntries = 64

// listCache maps a cache key (the method, or "resources/read" and the
// URI) to when its result goes stale.
type listCache struct {
	stale map[string]time.Time
	// building is the expiry of the listing being fetched, page by page:
	// the earliest of its pages' (zero: none seen yet, or a page without
	// ttlMs made it uncacheable).
	building    time.Time
	uncacheable bool
}

// SetCache makes the session honour ttlMs (true) or ignore it and send
// every request (false, the default).
func (s *Session) SetCache(honor bool) { s.cache = honor }

// Cached reports whether the last list or resources/read step was served
// from the session's cache, without a request.
func (s *Session) Cached() bool { return s.x != nil && s.x.cached }

// cacheKey is the cache key of a request: its method, and the URI for
// resources/read (a listing is cached whole, from its first page).
func cacheKey(op, uri string) string {
	if op == methodReadResource {
		return op + "\x00" + uri
	}
	return op
}

// fresh reports whether key's result is fresh in the cache, noting it as
// the answer of the step (Cached) when it is.
func (s *Session) fresh(key string) bool {
	if s.x != nil {
		s.x.cached = false
	}
	if !s.cache || s.era != Era2026 || s.x == nil || s.x.cache.stale == nil {
		return false
	}
	until, ok := s.x.cache.stale[key]
	if ok && time.Now().Before(until) {
		s.x.cached = true
		return true
	}
	return false
}

// startListing starts fetching a listing to cache.
func (s *Session) startListing() {
	if s.x != nil {
		s.x.cache.building, s.x.cache.uncacheable = time.Time{}, false
	}
}

// noteTTL notes the ttlMs of a cacheable result (call): for a listing,
// the earliest expiry of its pages so far.
func (s *Session) noteTTL(op string, result []byte) {
	switch op {
	case methodListTools, methodListResources, methodListPrompts, methodReadResource:
	default:
		return
	}
	ttl := gjson.GetBytes(result, "ttlMs")
	ms := ttl.Int()
	if ttl.Type != gjson.Number || ms <= 0 {
		// Absent, zero or negative: immediately stale (the spec's
		// reading of all three).
		if s.x != nil {
			s.x.cache.uncacheable = true
		}
		return
	}
	c := &s.ext().cache
	until := time.Now().Add(time.Duration(min(ms, int64(24*time.Hour/time.Millisecond))) * time.Millisecond)
	if c.building.IsZero() || until.Before(c.building) {
		c.building = until
	}
}

// store caches key's result until the expiry noted for it (a listing's
// earliest page), unless a page was uncacheable.
func (s *Session) store(key string) {
	if s.x == nil {
		return
	}
	c := &s.x.cache
	if c.uncacheable || c.building.IsZero() {
		delete(c.stale, key)
		return
	}
	if c.stale == nil || len(c.stale) >= maxCacheEntries {
		c.stale = make(map[string]time.Time, 4)
	}
	c.stale[key] = c.building
	c.building = time.Time{}
}
