package gateway

import (
	"fmt"
	"slices"
	"strings"
)

// Variant names a leak pattern the gateway reproduces (or the fix).
type Variant string

const (
	// VariantFixed releases every database session on every path.
	VariantFixed Variant = "fixed"
	// VariantCommitInFinally reproduces ContextForge #1885 / PR #1886: a
	// failing commit skips the release; sessions stay idle in transaction
	// until idle_in_transaction_session_timeout (scoping.go).
	VariantCommitInFinally Variant = "commit-in-finally"
	// VariantCommitInFinallyRare is commit-in-finally reached rarely: one
	// request in Config.RareLeakEvery (default 500) meets an error whose
	// handling cancels its context before the cleanup, under a load that
	// never gives up; a short sign-off sees nothing, a soak sees the climb
	// (rareleak.go).
	VariantCommitInFinallyRare Variant = "commit-in-finally-rare"
	// VariantHeldWhileWaiting reproduces an MCP server whose wait_for_run
	// kept the authentication request's pooled connection for its whole
	// polling loop: the pool runs dry while the server sees plain idle
	// sessions (scoping.go).
	VariantHeldWhileWaiting Variant = "held-while-waiting"
	// VariantHeldWhilePolling is held-while-waiting's Tasks-era twin (MCP
	// 2026-07-28, the Tasks extension): an MCP server that moved
	// wait_for_run onto tasks by keeping the tool call's unit of work on
	// the task object — a task-scoped session checked out at the task's
	// creation, reused by every tasks/get poll and closed only on the
	// completion path. Open tasks pin the pool across their polls and the
	// time between them while PostgreSQL sees plain idle sessions; a
	// cancelled or abandoned task holds its connection until its TTL
	// (taskpoll.go).
	VariantHeldWhilePolling Variant = "held-while-polling"
	// VariantHeldAcrossUpstream reproduces ContextForge #2518 / #2323: a
	// transaction stays open while call_upstream waits on the upstream
	// (callupstream.go).
	VariantHeldAcrossUpstream Variant = "held-across-upstream"
	// VariantSessionOutsideRequest reproduces ContextForge #1862: a side job
	// (token-usage tracking) opens its own session outside the request's
	// session management and closes it only on the happy path; a token used
	// again within a second leaves it idle in transaction (usage.go).
	VariantSessionOutsideRequest Variant = "session-outside-request"
)

// Variants lists every known variant, for help texts and validation.
var Variants = []Variant{VariantFixed, VariantCommitInFinally, VariantCommitInFinallyRare, VariantHeldWhileWaiting, VariantHeldWhilePolling, VariantHeldAcrossUpstream, VariantSessionOutsideRequest}

// VariantSet is the set of variants enabled at once.
type VariantSet map[Variant]bool

// ParseVariants parses a comma-separated list of variant names.
func ParseVariants(s string) (VariantSet, error) {
	set := VariantSet{}
	for _, name := range strings.Split(s, ",") {
		v := Variant(strings.TrimSpace(name))
		if v == "" {
			continue
		}
		if !slices.Contains(Variants, v) {
			return nil, fmt.Errorf("unknown gateway variant %q (known: %s)", v, VariantNames())
		}
		set[v] = true
	}
	if len(set) == 0 {
		set[VariantFixed] = true
	}
	if set[VariantFixed] && len(set) > 1 {
		return nil, fmt.Errorf("variant %q cannot be combined with leak variants (%s)", VariantFixed, s)
	}
	return set, nil
}

// VariantNames returns the known variant names, comma-separated.
func VariantNames() string {
	names := make([]string, len(Variants))
	for i, v := range Variants {
		names[i] = string(v)
	}
	return strings.Join(names, ", ")
}

// String returns the set's names in a stable order.
func (s VariantSet) String() string {
	var names []string
	for _, v := range Variants {
		if s[v] {
			names = append(names, string(v))
		}
	}
	return strings.Join(names, ",")
}
