package engine

import (
	"errors"
	"maps"
	"sync"

	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// The protocol era each user speaks. A user starts its session as the
// scenario's protocol setting says (auto by default: server/discover,
// 2026-07-28 when the server offers it, else the 2025 handshake); what it
// ended up speaking is counted here, by version, for Result.Protocol.
//
// In the 2026-07-28 era a user's start is a server/discover and there is
// no session: the start is measured as server/discover, endSession steps
// do nothing, and ping is a method the era no longer has (the server's
// method-not-found counts as a failure of kind jsonrpc, as any refused
// request does).

// protocolCounts counts a scenario's users by the protocol version they
// spoke. Starts are rare next to requests (once per session), so a map
// under a lock will do.
type protocolCounts struct {
	mu    sync.Mutex
	users map[string]int64
}

func (pc *protocolCounts) add(version string) { pc.addN(version, 1) }

// addN counts n users under version.
func (pc *protocolCounts) addN(version string, n int64) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.users == nil {
		pc.users = map[string]int64{}
	}
	pc.users[version] += n
}

// snapshot returns the counts (nil: no user started).
func (pc *protocolCounts) snapshot() map[string]int64 {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return maps.Clone(pc.users)
}

// countProtocol counts the user under the version its new session speaks,
// once per version: a user whose later sessions speak another version (a
// server upgraded mid-run) is counted under both.
func (v *vu) countProtocol() {
	version := v.s.ProtocolVersion()
	for _, seen := range v.spoke {
		if seen == version {
			return
		}
	}
	v.spoke = append(v.spoke, version)
	v.sc.protocols.add(version)
}

// startOp is the operation a user's start is measured as: server/discover
// when it speaks 2026-07-28 or failed at its discover (the 2026-07-28
// setting; auto before it knew the server's era), else initialize — also
// when auto fell back to the handshake, whose discover answered that the
// server has no 2026-07-28 is then part of initialize's latency.
func (v *vu) startOp(err error) uint8 {
	if err == nil {
		if v.s.Era() == mcp.Era2026 {
			return opDiscover
		}
		return opInitialize
	}
	var e *mcp.Error
	if v.cs.Pin == mcp.Version20260728 || errors.As(err, &e) && e.Op == plan.OpDiscover {
		return opDiscover
	}
	return opInitialize
}
