package mcp

import (
	"sync/atomic"
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
	// the earliest of its pages' (zero: none seen yet). Whether a page
	// made it uncacheable is Session.uncacheable, which needs no extras.
	building time.Time
	// changed has a bit per list method (changedBit) that a listening
	// user's stream set on a list_changed notification: the cached list
	// is stale at once (the spec's immediate invalidation signal).
	// Written by the stream's goroutine, read by the user's.
	changed atomic.Uint32
}

// changedBit is the bit of listCache.changed a notification method
// sets, and the cache keys it makes stale; 0: none.
func changedBit(method string) uint32 {
	switch method {
	case "notifications/tools/list_changed":
		return 1 << 0
	case "notifications/prompts/list_changed":
		return 1 << 1
	case "notifications/resources/list_changed":
		return 1 << 2
	case "notifications/resources/updated":
		return 1 << 3
	}
	return 0
}

// changedBitOf is the bit of listCache.changed that makes key stale.
func changedBitOf(key string) uint32 {
	switch {
	case key == methodListTools:
		return 1 << 0
	case key == methodListPrompts:
		return 1 << 1
	case key == methodListResources:
		return 1 << 2
	default: // resources/read and a URI: any resource update
		return 1 << 3
	}
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
	c := &s.x.cache
	if bit := changedBitOf(key); c.changed.Load()&bit != 0 {
		// The server said this changed: drop what it invalidates.
		c.changed.And(^bit)
		for k := range c.stale {
			if changedBitOf(k) == bit {
				delete(c.stale, k)
			}
		}
		return false
	}
	until, ok := c.stale[key]
	if ok && time.Now().Before(until) {
		s.x.cached = true
		return true
	}
	return false
}

// startListing starts fetching a listing (or a read) to cache.
func (s *Session) startListing() {
	s.uncacheable = false
	if s.x != nil {
		s.x.cache.building = time.Time{}
	}
}

// noCache makes what is being fetched uncacheable: a result of a retry
// that answered input_required depends on inputs outside the cache key
// (the caching spec: such results MUST NOT be cached).
func (s *Session) noCache() { s.uncacheable = true }

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
		s.uncacheable = true
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
	if s.uncacheable || c.building.IsZero() {
		delete(c.stale, key)
		return
	}
	if c.stale == nil || len(c.stale) >= maxCacheEntries {
		c.stale = make(map[string]time.Time, 4)
	}
	c.stale[key] = c.building
	c.building = time.Time{}
}
